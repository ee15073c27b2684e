import { type GpuProfile, numGpuBlocks } from '../../../../shared/gpu/gpu-profile.ts'
import { createStepCostModel, emptyStepShape } from '../../../../shared/gpu/step-cost-model.ts'
import { checkMultimodal } from './block-extra-keys.ts'
import type { EngineKvEvent, MultimodalFeature } from './engine-kv-event.ts'
import { kvCacheLayout } from './kv-cache-layout.ts'
import { KvCacheManager } from './kv-cache-manager.ts'
import { defaultKvEventsOptions, type SimKvEventsOptions } from './kv-events-options.ts'
import type { PrefixCacheCounts } from './prefix-cache-counters.ts'
import { newRequestBlocks, type RequestBlocks } from './request-blocks.ts'

export type FinishReason = 'stop' | 'length'

/** A request as the engine sees it: token ids in, a planned output sequence out. */
export interface EngineRequestInput {
  id: string
  promptTokenIds: readonly number[]
  /** The tokens the "model" will produce; the count is exact, the content synthetic. */
  outputTokenIds: readonly number[]
  finishReason: FinishReason
  /** LoRA adapter and cache_salt: part of the block hash, as in vLLM's extra_keys. */
  loraName?: string | null
  cacheSalt?: string | null
  /** Placeholder token ranges of images and other inputs: their identity enters the blocks. */
  multimodal?: readonly MultimodalFeature[]
  /** vLLM's per-request `kv_cache_report_mode` (extra_args); the pod's default when absent. */
  kvCacheReportMode?: 'incremental' | 'full'
  arrivalMs: number
}

export interface TokenOutput {
  requestId: string
  tokenId: number
  /** 0 for the first generated token. */
  index: number
  finished: FinishReason | null
}

export interface StepResult {
  startMs: number
  durationMs: number
  scheduledTokens: number
  outputs: TokenOutput[]
  /**
   * Requests scheduled for the first time this step, with their prefix-cache hit: local
   * plus CPU-tier (external) tokens, as vLLM's `num_cached_tokens`.
   */
  started: { requestId: string; numCachedTokens: number }[]
  preempted: string[]
  /** KV events of this step: one batch, as vLLM publishes once per step. */
  events: EngineKvEvent[]
}

export interface EngineStats {
  running: number
  waiting: number
  kvCacheUsage: number
  numGpuBlocks: number
  /** vLLM's exported `prefix_cache_queries`: every lookup of a request never preempted. */
  prefixCacheQueries: number
  /** vLLM's exported `prefix_cache_hits`, for the same lookups. */
  prefixCacheHits: number
  /** Lookups of preempted requests, which vLLM counts apart and does not export. */
  preemptedPrefixCacheQueries: number
  preemptedPrefixCacheHits: number
  /** The CPU tier's share (vLLM's `external_prefix_cache_queries/hits`). */
  externalPrefixCacheQueries: number
  externalPrefixCacheHits: number
  /** Blocks held by the CPU tier (0 without one). */
  cpuBlocks: number
  preemptions: number
  steps: number
}

interface RequestState {
  input: EngineRequestInput
  tokens: number[]
  cache: RequestBlocks
  numComputed: number
  generated: number
  started: boolean
  numPreemptions: number
}

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
 * run out. Pure: the caller owns the clock and the randomness.
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
    this.manager = new KvCacheManager({ layout, numBlocks, hashSeed: seed, cpuOffload })
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
    if (input.promptTokenIds.length === 0 || input.outputTokenIds.length === 0) {
      throw new Error('a request needs at least one prompt token and one output token')
    }
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
    if (this.running.includes(state)) {
      this.running = this.running.filter((r) => r !== state)
      this.freeBlocks(state)
    }
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

  /** When the earliest waiting request arrives (ms), or null when none waits. */
  nextArrivalMs(): number | null {
    let earliest: number | null = null
    for (const request of this.waiting) {
      if (earliest === null || request.input.arrivalMs < earliest)
        earliest = request.input.arrivalMs
    }
    return earliest
  }

  /**
   * Schedules and runs one step starting at `nowMs`, admitting only requests that have
   * arrived by then; null when nothing can run at `nowMs`.
   */
  step(nowMs: number): StepResult | null {
    if (!this.hasWork()) return null
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

    while (preempted.length === 0 && budget > 0 && this.waiting.length > 0) {
      if (this.running.length >= maxNumSeqs) break
      const request = this.waiting[0] as RequestState
      // A request that has not arrived yet (the caller runs behind real time) waits.
      if (request.input.arrivalMs > nowMs) break
      const hit = this.manager.lookup(request.cache, request.numPreemptions > 0)
      const numComputed = hit.localTokens + hit.externalTokens
      const count = Math.min(request.tokens.length - numComputed, budget)
      if (!this.manager.allocateSlots(request.cache, 0, count, hit)) break
      request.numComputed = numComputed
      this.waiting.shift()
      this.running.push(request)
      if (!request.started) {
        request.started = true
        started.push({ requestId: request.input.id, numCachedTokens: numComputed })
      }
      scheduled.push([request, count])
      budget -= count
    }

    if (scheduled.length === 0 && preempted.length === 0) return null
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

  /** Runs `count` tokens of `request`; samples its next token when it has caught up. */
  private advance(request: RequestState, count: number): TokenOutput[] {
    request.numComputed += count
    if (request.numComputed < request.tokens.length) return []
    const { outputTokenIds, finishReason, id } = request.input
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
