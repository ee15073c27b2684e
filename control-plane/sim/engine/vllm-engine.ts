import { type GpuProfile, numGpuBlocks } from '../../../shared/gpu/gpu-profile.ts'
import { createStepCostModel, emptyStepShape } from '../../../shared/gpu/step-cost-model.ts'
import { createBlockHasher } from './block-hasher.ts'
import { BlockPool, type EngineKvEvent } from './block-pool.ts'

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
  /** Requests scheduled for the first time this step, with their prefix-cache hit. */
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
  prefixCacheQueries: number
  prefixCacheHits: number
  preemptions: number
  steps: number
}

interface RequestState {
  input: EngineRequestInput
  tokens: number[]
  numComputed: number
  blocks: number[]
  hashes: bigint[]
  numCachedBlocks: number
  generated: number
  started: boolean
  extra: string | null
}

export interface EngineOptions {
  profile: GpuProfile
  /** Uniform [0,1): jitter and, unless hashSeed is given, the NONE_HASH of this incarnation. */
  random: () => number
  hashSeed?: readonly [number, number]
}

/**
 * vLLM V1's scheduler and KV-cache manager, step by step, in virtual time (docs/vllm-wire.md
 * §5.1): one token budget per step shared by running requests (decodes, unfinished
 * prefill chunks) and then waiting ones; prefix-cache lookup capped at
 * floor((n−1)/block)·block; blocks cached as they fill, generated tokens included;
 * preemption by recompute of the newest running request when blocks run out.
 * Pure: the caller owns the clock and the randomness.
 */
export class VllmEngine {
  readonly profile: GpuProfile
  private readonly pool: BlockPool
  private readonly events: EngineKvEvent[] = []
  private readonly hasher
  private readonly cost
  private readonly random: () => number
  private readonly requests = new Map<string, RequestState>()
  private running: RequestState[] = []
  private waiting: RequestState[] = []
  private prefixQueries = 0
  private prefixHits = 0
  private preemptions = 0
  private steps = 0

  constructor(options: EngineOptions) {
    this.profile = options.profile
    this.random = options.random
    const blocks = numGpuBlocks(options.profile)
    const capacity = (blocks - 1) * options.profile.blockSize
    if (capacity < options.profile.model.maxModelLen) {
      // vLLM refuses to start in this case, so a request can never need more than the cache.
      throw new Error(
        `the KV cache holds ${capacity} tokens, less than max_model_len ${options.profile.model.maxModelLen}; lower max_model_len or give the cache more memory`,
      )
    }
    this.pool = new BlockPool(blocks, this.events)
    const seed = options.hashSeed ?? [randomWord(options.random), randomWord(options.random)]
    this.hasher = createBlockHasher(options.profile.blockSize, seed)
    this.cost = createStepCostModel(options.profile)
  }

  get stats(): EngineStats {
    return {
      running: this.running.length,
      waiting: this.waiting.length,
      kvCacheUsage: this.pool.usage,
      numGpuBlocks: this.pool.numBlocks,
      prefixCacheQueries: this.prefixQueries,
      prefixCacheHits: this.prefixHits,
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
    const extra = [input.loraName ?? '', input.cacheSalt ?? ''].join('\u0000')
    const state: RequestState = {
      input,
      tokens: [...input.promptTokenIds],
      numComputed: 0,
      blocks: [],
      hashes: [],
      numCachedBlocks: 0,
      generated: 0,
      started: false,
      extra: extra === '\u0000' ? null : extra,
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
    return this.pool.reset()
  }

  /** Events produced outside a step (a reset), for the caller to publish now. */
  takeEvents(): EngineKvEvent[] {
    return this.events.splice(0)
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
      let admitted = this.allocateSlots(request, count, [])
      while (!admitted) {
        const victim = this.running.pop() as RequestState
        this.preempt(victim)
        preempted.push(victim.input.id)
        if (victim === request) break
        admitted = this.allocateSlots(request, count, [])
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
      const hits = this.findCachedBlocks(request)
      const numComputed = hits.length * this.profile.blockSize
      const count = Math.min(request.tokens.length - numComputed, budget)
      request.numComputed = numComputed
      request.numCachedBlocks = hits.length
      if (!this.allocateSlots(request, count, hits)) {
        request.numComputed = 0
        request.numCachedBlocks = 0
        break
      }
      this.waiting.shift()
      this.running.push(request)
      this.prefixQueries += request.tokens.length
      this.prefixHits += numComputed
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
      events: this.events.splice(0),
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

  /** vLLM's allocate_slots: cache hits first, then new blocks, then cache what fills. */
  private allocateSlots(request: RequestState, count: number, hits: readonly number[]): boolean {
    const blockSize = this.profile.blockSize
    const needTokens = request.numComputed + count
    const needBlocks = Math.ceil(needTokens / blockSize) - request.blocks.length - hits.length
    let evictableHits = 0
    for (const block of hits) if (this.pool.isFree(block)) evictableHits++
    if (needBlocks > this.pool.numFree - evictableHits) return false
    this.pool.touch(hits)
    request.blocks.push(...hits)
    if (needBlocks > 0) request.blocks.push(...this.pool.allocate(needBlocks))
    this.cacheFullBlocks(request, needTokens)
    return true
  }

  private cacheFullBlocks(request: RequestState, numTokens: number): void {
    const blockSize = this.profile.blockSize
    const full = Math.floor(numTokens / blockSize)
    const first = request.numCachedBlocks
    if (full <= first) return
    this.computeHashes(request, full)
    for (let k = first; k < full; k++) {
      this.pool.cache(request.blocks[k] as number, request.hashes[k] as bigint)
    }
    this.events.push({
      type: 'BlockStored',
      blockHashes: request.hashes.slice(first, full),
      parentBlockHash: first > 0 ? (request.hashes[first - 1] as bigint) : null,
      tokenIds: request.tokens.slice(first * blockSize, full * blockSize),
      blockSize,
      loraName: request.input.loraName ?? null,
      ...saltedExtraKeys(request.input, first, full),
    })
    request.numCachedBlocks = full
  }

  /** Longest run of cached blocks from the start, at most floor((n−1)/block) blocks. */
  private findCachedBlocks(request: RequestState): number[] {
    const limit = Math.floor((request.tokens.length - 1) / this.profile.blockSize)
    this.computeHashes(request, limit)
    const hits: number[] = []
    for (let k = 0; k < limit; k++) {
      const block = this.pool.lookup(request.hashes[k] as bigint)
      if (block === undefined) break
      hits.push(block)
    }
    return hits
  }

  private computeHashes(request: RequestState, count: number): void {
    const blockSize = this.profile.blockSize
    for (let k = request.hashes.length; k < count; k++) {
      const parent = k > 0 ? (request.hashes[k - 1] as bigint) : null
      // cache_salt only salts the first block, as in vLLM; the LoRA name salts all.
      const extra = k === 0 ? request.extra : (request.input.loraName ?? null)
      request.hashes.push(this.hasher.hash(parent, request.tokens, k * blockSize, extra))
    }
  }

  private preempt(request: RequestState): void {
    this.freeBlocks(request)
    request.numComputed = 0
    request.numCachedBlocks = 0
    this.waiting.unshift(request)
    this.preemptions++
  }

  private freeBlocks(request: RequestState): void {
    this.pool.release([...request.blocks].reverse())
    request.blocks = []
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

/**
 * vLLM's extra_keys of blocks first..full-1 when they start a salted sequence: the first
 * block's carry cache_salt (after the LoRA name), the others the LoRA name alone. Routers
 * need the salt to key the sequence as the pod does (vllm-wire.md §2).
 */
function saltedExtraKeys(
  input: EngineRequestInput,
  first: number,
  full: number,
): { extraKeys?: (string[] | null)[] } {
  if (first > 0 || !input.cacheSalt) return {}
  const lora = input.loraName ? [input.loraName] : []
  return {
    extraKeys: Array.from({ length: full }, (_, k) =>
      k === 0 ? [...lora, input.cacheSalt as string] : lora.length > 0 ? lora : null,
    ),
  }
}
