import {
  type GpuProfile,
  kvBytesPerToken,
  numGpuBlocks,
} from '../../../../shared/gpu/gpu-profile.ts'
import { createStepCostModel, emptyStepShape } from '../../../../shared/gpu/step-cost-model.ts'
import { checkMultimodal } from './block-extra-keys.ts'
import type { EngineKvEvent } from './engine-kv-event.ts'
import { kvCacheLayout } from './kv-cache-layout.ts'
import { KvCacheManager } from './kv-cache-manager.ts'
import { defaultKvEventsOptions, type SimKvEventsOptions } from './kv-events-options.ts'
import type { PrefixCacheCounts } from './prefix-cache-counters.ts'
import { newRequestBlocks, type RequestBlocks } from './request-blocks.ts'
import type { EngineRequestInput, EngineStats, StepResult, TokenOutput } from './step-result.ts'

export type {
  EngineRequestInput,
  EngineStats,
  FinishReason,
  StepResult,
  TokenOutput,
} from './step-result.ts'

interface RequestState {
  input: EngineRequestInput
  tokens: number[]
  cache: RequestBlocks
  numComputed: number
  generated: number
  started: boolean
  numPreemptions: number
  /** WAITING_FOR_REMOTE_KVS: when its CPU-tier load completes; null when not loading. */
  loadEndMs: number | null
  /** The connector deferred its lookup: tried again when a CPU-tier transfer ends. */
  deferred: boolean
}

/** What trying a waiting request gave: tokens scheduled, passed over, or stop admitting. */
type Admission = number | 'skip' | 'stop'

export interface EngineOptions {
  profile: GpuProfile
  /** Uniform [0,1): jitter and, unless hashSeed is given, the NONE_HASH of this incarnation. */
  random: () => number
  hashSeed?: readonly [number, number]
  /** The KV-event variants to emit (parsed); vLLM's defaults when absent. */
  kvEvents?: SimKvEventsOptions
  /**
   * LoRA name → vLLM's int id, assigned 1, 2, … in the order adapters are first seen;
   * pass one map to the engines of a pod so its ranks agree.
   */
  loraIds?: Map<string, number>
}

/**
 * vLLM V1's scheduler, step by step, in virtual time (docs/vllm-wire.md §5.1): one token
 * budget per step shared by running requests (decodes, unfinished prefill chunks) and
 * then waiting ones; a waiting request looks its prefix up each time it is tried
 * (`KvCacheManager`); preemption by recompute of the newest running request when blocks
 * run out. With a CPU tier, a request whose prefix continues there gets its blocks and
 * waits, passed over by the others, while the tier loads them over the host link
 * (WAITING_FOR_REMOTE_KVS, `vllm/v1/core/sched/scheduler.py`); stores to the tier run
 * behind the steps. Pure: the caller owns the clock and the randomness.
 */
export class VllmEngine {
  readonly profile: GpuProfile
  readonly kvEvents: SimKvEventsOptions
  private readonly manager: KvCacheManager
  private readonly loraIds: Map<string, number>
  private readonly cost
  private readonly random: () => number
  private readonly requests = new Map<string, RequestState>()
  private running: RequestState[] = []
  private waiting: RequestState[] = []
  private preemptions = 0
  private steps = 0
  private lastStepMs = Number.NEGATIVE_INFINITY

  constructor(options: EngineOptions) {
    this.profile = options.profile
    this.random = options.random
    this.kvEvents = options.kvEvents ?? defaultKvEventsOptions
    const blocks = numGpuBlocks(options.profile)
    const capacity = (blocks - 1) * options.profile.blockSize
    if (capacity < options.profile.model.maxModelLen) {
      // vLLM refuses to start in this case, so a request can never need more than the cache.
      throw new Error(
        `the KV cache holds ${capacity} tokens, less than max_model_len ${options.profile.model.maxModelLen}; lower max_model_len or give the cache more memory`,
      )
    }
    const { hybrid, groupFields, cpuOffload } = this.kvEvents
    const layout = kvCacheLayout(options.profile.blockSize, hybrid, groupFields)
    const seed = options.hashSeed ?? [randomWord(options.random), randomWord(options.random)]
    // Each group's layers take their share of every page, so the pool has one page set
    // per group (simplified: vLLM sizes pages so that groups of equal layer count fit).
    const numBlocks = (blocks - 1) * layout.groups.length + 1
    this.manager = new KvCacheManager({
      layout,
      numBlocks,
      hashSeed: seed,
      cpuOffload,
      bytesPerToken: kvBytesPerToken(options.profile),
    })
    this.loraIds = options.loraIds ?? new Map()
    this.cost = createStepCostModel(options.profile)
  }

  get stats(): EngineStats {
    const counts: PrefixCacheCounts = this.manager.counters.snapshot
    return {
      running: this.running.length,
      waiting: this.waiting.length,
      kvCacheUsage: this.manager.usage,
      numGpuBlocks: this.manager.numBlocks,
      prefixCacheQueries: counts.queries,
      prefixCacheHits: counts.hits,
      preemptedPrefixCacheQueries: counts.preemptedQueries,
      preemptedPrefixCacheHits: counts.preemptedHits,
      externalPrefixCacheQueries: counts.externalQueries,
      externalPrefixCacheHits: counts.externalHits,
      cpuBlocks: this.manager.cpuBlocks,
      preemptions: this.preemptions,
      steps: this.steps,
    }
  }

  hasWork(): boolean {
    return this.running.length > 0 || this.waiting.length > 0
  }

  add(input: EngineRequestInput): void {
    if (this.requests.has(input.id)) throw new Error(`duplicate request id ${input.id}`)
    // No output tokens: a pooling request, done when its prompt is computed.
    if (input.promptTokenIds.length === 0) throw new Error('a request needs a prompt token')
    const multimodal = input.multimodal ?? []
    checkMultimodal(multimodal, input.promptTokenIds.length)
    const loraName = input.loraName || null
    const tokens = [...input.promptTokenIds]
    const reportMode = input.kvCacheReportMode ?? this.kvEvents.reportMode
    const source = { loraName, cacheSalt: input.cacheSalt || null, multimodal }
    const state: RequestState = {
      input,
      tokens,
      cache: newRequestBlocks(
        this.manager.layout,
        tokens,
        source,
        loraName === null ? null : this.loraIdOf(loraName),
        reportMode === 'full',
      ),
      numComputed: 0,
      generated: 0,
      started: false,
      numPreemptions: 0,
      loadEndMs: null,
      deferred: false,
    }
    this.requests.set(input.id, state)
    this.waiting.push(state)
  }

  /** Drops a request (client gone); its blocks return to the free list. */
  abort(id: string): boolean {
    const state = this.requests.get(id)
    if (!state) return false
    this.requests.delete(id)
    this.waiting = this.waiting.filter((r) => r !== state)
    this.running = this.running.filter((r) => r !== state)
    // A running request's blocks, or those a waiting one holds for its CPU-tier load.
    this.freeBlocks(state)
    return true
  }

  /** reset_prefix_cache: refused (false) while any block is in use, as in vLLM. */
  resetPrefixCache(): boolean {
    return this.manager.reset()
  }

  /** Events produced outside a step (a reset), for the caller to publish now. */
  takeEvents(): EngineKvEvent[] {
    return this.manager.takeEvents()
  }

  /**
   * When to step next if `step` ran nothing (ms): the earliest waiting request's arrival,
   * or, when a CPU-tier load is under way and no request waits to arrive, when the first
   * load completes or, for a request the connector deferred, the first transfer ends;
   * null when none waits.
   */
  nextArrivalMs(): number | null {
    let arrival: number | null = null
    let transfer: number | null = null
    for (const request of this.waiting) {
      const wake = request.loadEndMs ?? (request.deferred ? this.manager.nextTransferEndMs : null)
      if (wake !== null) transfer = Math.min(transfer ?? wake, wake)
      else arrival = Math.min(arrival ?? request.input.arrivalMs, request.input.arrivalMs)
    }
    if (transfer === null) return arrival
    // A request that has arrived and was not admitted waits with the loads.
    if (arrival === null || arrival <= this.lastStepMs) return transfer
    return Math.min(arrival, transfer)
  }

  /**
   * Schedules and runs one step starting at `nowMs`, admitting only requests that have
   * arrived by then; null when nothing can run at `nowMs`.
   */
  step(nowMs: number): StepResult | null {
    if (!this.hasWork()) return null
    this.lastStepMs = nowMs
    this.manager.settle(nowMs)
    const { maxNumBatchedTokens, maxNumSeqs } = this.profile.scheduler
    let budget = maxNumBatchedTokens
    const scheduled: [RequestState, number][] = []
    const preempted: string[] = []
    const started: StepResult['started'] = []

    for (let i = 0; i < this.running.length && budget > 0; ) {
      const request = this.running[i] as RequestState
      const count = Math.min(request.tokens.length - request.numComputed, budget)
      const allocate = () =>
        this.manager.allocateSlots(request.cache, request.numComputed, count, null)
      let admitted = allocate()
      while (!admitted) {
        const victim = this.running.pop() as RequestState
        this.preempt(victim)
        preempted.push(victim.input.id)
        if (victim === request) break
        admitted = allocate()
      }
      if (!admitted) break
      scheduled.push([request, count])
      budget -= count
      i++
    }

    for (let i = 0; preempted.length === 0 && budget > 0 && i < this.waiting.length; ) {
      if (this.running.length >= maxNumSeqs) break
      const request = this.waiting[i] as RequestState
      // A request that has not arrived yet (the caller runs behind real time) waits.
      if (request.input.arrivalMs > nowMs) break
      const count = this.admit(request, nowMs, budget)
      if (count === 'stop') break
      if (count === 'skip') {
        i++
        continue
      }
      this.waiting.splice(i, 1)
      this.running.push(request)
      if (!request.started) {
        request.started = true
        // vLLM's num_cached_tokens: what was computed when first scheduled, loads included.
        started.push({ requestId: request.input.id, numCachedTokens: request.numComputed })
      }
      scheduled.push([request, count])
      budget -= count
    }

    if (scheduled.length === 0 && preempted.length === 0) {
      this.manager.submitStores(nowMs)
      return null
    }
    const shape = emptyStepShape()
    for (const [request, count] of scheduled) {
      const before = request.numComputed
      shape.tokens += count
      if (count === 1 && request.generated > 0 && before === request.tokens.length - 1) {
        shape.decodeContext += before + 1
      } else {
        shape.prefillContext += before + count
        shape.prefillAttention += count * (before + count / 2)
      }
    }
    const durationMs = this.cost.stepMs(shape) * this.jitter()
    const outputs = scheduled.flatMap(([request, count]) => this.advance(request, count))
    this.running = this.running.filter((request) => this.requests.has(request.input.id))
    this.steps++
    // Copies to the CPU tier start when the step that computed them ends, and the
    // transfers done by then are announced with its batch.
    this.manager.submitStores(nowMs + durationMs)
    this.manager.settle(nowMs + durationMs)
    return {
      startMs: nowMs,
      durationMs,
      scheduledTokens: shape.tokens,
      outputs,
      started,
      preempted,
      events: this.manager.takeEvents(),
    }
  }

  /**
   * Tries a waiting request at `nowMs` within `budget` tokens, as the waiting loop of
   * vLLM's `schedule()`: a finished load gives it the loaded tokens as computed (the last
   * prompt token recomputed when all were loaded, `_update_waiting_for_remote_kv`); a
   * request that has computed nothing looks its prefix up, and when the connector finds
   * CPU-tier blocks after the GPU hit it gets the blocks for them and starts the load
   * (`load_kv_async`: no tokens scheduled, passed over until done); the connector defers
   * it while some of those blocks are in transfer or max_num_seqs loads are under way
   * (`offloading/scheduler.py`).
   */
  private admit(request: RequestState, nowMs: number, budget: number): Admission {
    request.deferred = false
    if (request.loadEndMs !== null) {
      if (request.loadEndMs > nowMs) return 'skip'
      request.loadEndMs = null
      const blocks = request.cache.blocks[0]?.length ?? 0
      const loaded = Math.min(blocks * this.profile.blockSize, request.tokens.length)
      request.numComputed = loaded === request.tokens.length ? loaded - 1 : loaded
      this.manager.finishLoad(request.cache, request.numComputed)
    }
    let hit = null
    if (request.numComputed === 0) {
      hit = this.manager.lookup(request.cache, request.numPreemptions > 0)
      const full = hit.externalTokens > 0 && this.manager.loads >= this.profile.scheduler.maxNumSeqs
      request.deferred = hit.deferred || full
      if (request.deferred) return 'skip'
      if (hit.externalTokens > 0) {
        if (!this.manager.allocateSlots(request.cache, 0, 0, hit)) return 'stop'
        request.loadEndMs = this.manager.startLoad(request.cache, hit, nowMs)
        return 'skip'
      }
    }
    const numComputed = hit ? hit.localTokens : request.numComputed
    const count = Math.min(request.tokens.length - numComputed, budget)
    if (!this.manager.allocateSlots(request.cache, numComputed, count, hit)) return 'stop'
    request.numComputed = numComputed
    return count
  }

  /** Runs `count` tokens of `request`; samples its next token when it has caught up. */
  private advance(request: RequestState, count: number): TokenOutput[] {
    request.numComputed += count
    if (request.numComputed < request.tokens.length) return []
    const { outputTokenIds, finishReason, id } = request.input
    if (outputTokenIds.length === 0) {
      this.requests.delete(id)
      this.freeBlocks(request)
      return [{ requestId: id, tokenId: -1, index: 0, finished: 'stop', pooled: true }]
    }
    const tokenId = outputTokenIds[request.generated] as number
    request.tokens.push(tokenId)
    const index = request.generated++
    const done = request.generated >= outputTokenIds.length
    if (done) {
      this.requests.delete(id)
      this.freeBlocks(request)
    }
    return [{ requestId: id, tokenId, index, finished: done ? finishReason : null }]
  }

  private loraIdOf(name: string): number {
    let id = this.loraIds.get(name)
    if (id === undefined) {
      id = this.loraIds.size + 1
      this.loraIds.set(name, id)
    }
    return id
  }

  private preempt(request: RequestState): void {
    this.freeBlocks(request)
    request.numComputed = 0
    request.numPreemptions++
    this.waiting.unshift(request)
    this.preemptions++
  }

  private freeBlocks(request: RequestState): void {
    this.manager.free(request.cache)
  }

  /** 1 + N(0, jitter), from a Box-Muller pair; clamped so a step never runs backwards. */
  private jitter(): number {
    const sigma = this.profile.jitter
    if (sigma === 0) return 1
    const u = Math.max(this.random(), Number.MIN_VALUE)
    const v = this.random()
    const gaussian = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
    return Math.max(0.5, 1 + sigma * gaussian)
  }
}

function randomWord(random: () => number): number {
  return Math.floor(random() * 0x100000000) | 0
}
