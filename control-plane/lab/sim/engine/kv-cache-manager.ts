import { attentionTypes } from './attention-types.ts'
import { blockExtraKeys } from './block-extra-keys.ts'
import { createBlockHasher } from './block-hasher.ts'
import { BlockPool, nullBlock } from './block-pool.ts'
import { CpuOffloadTier, type OffloadedBlock } from './cpu-offload-tier.ts'
import type { EngineExtraKey, EngineKvEvent } from './engine-kv-event.ts'
import { longestCacheHit } from './find-longest-cache-hit.ts'
import { HostLink } from './host-link.ts'
import type { KvCacheLayout } from './kv-cache-layout.ts'
import type { SimCpuOffloadOptions } from './kv-events-options.ts'
import { PrefixCacheCounters } from './prefix-cache-counters.ts'
import { type RequestBlocks, RequestHashes } from './request-blocks.ts'
import { reuseEvents } from './reuse-events.ts'

/** A lookup's result: each group's hit blocks and the tokens they and the CPU tier cover. */
export interface CacheHit {
  blocks: number[][]
  localTokens: number
  /** Tokens to load from the CPU tier (the connector's `get_num_new_matched_tokens`). */
  externalTokens: number
  /** The connector deferred the lookup (blocks in transfer): try the request again later. */
  deferred: boolean
  /** The request had been preempted before (its counts are kept apart). */
  preempted: boolean
}

export interface KvCacheManagerOptions {
  layout: KvCacheLayout
  numBlocks: number
  hashSeed: readonly [number, number]
  cpuOffload: SimCpuOffloadOptions | null
  /** KV-cache bytes of one token, all groups together: what a transfer moves. */
  bytesPerToken: number
}

/**
 * vLLM's KVCacheManager and its coordinator (`vllm/v1/core/kv_cache_manager.py`,
 * `kv_cache_coordinator.py`, `single_type_kv_cache_manager.py`): prefix lookup across the
 * KV-cache groups, slot allocation with sliding-window blocks freed as the window passes,
 * caching of full blocks with their BlockStored events, and the prefix-cache counters. The
 * OffloadingConnector's CPU tier, when configured, sits behind it; its events follow the
 * GPU ones in each batch (`scheduler.py`: `events.extend(connector_events)`).
 */
export class KvCacheManager {
  readonly layout: KvCacheLayout
  readonly counters = new PrefixCacheCounters()
  private readonly pool: BlockPool<OffloadedBlock | undefined>
  private readonly events: EngineKvEvent[] = []
  private readonly connectorEvents: EngineKvEvent[] = []
  private readonly hashes: RequestHashes
  private readonly cpu: CpuOffloadTier | null
  private readonly storeEvery: boolean

  constructor(options: KvCacheManagerOptions) {
    this.layout = options.layout
    const offload = options.cpuOffload
    const share = options.bytesPerToken / this.layout.groups.length
    this.cpu = offload
      ? new CpuOffloadTier({
          capacity: offload.capacityBlocks,
          selfDescribing: offload.selfDescribing,
          events: this.connectorEvents,
          link: new HostLink(offload.hostLinkBytesPerSecond),
          // Each group's layers take their share of a token's bytes (see VllmEngine).
          blockBytes: (group) => group.blockSize * share,
        })
      : null
    this.storeEvery = offload?.store === 'every-block'
    const cpu = this.cpu
    this.pool = new BlockPool(options.numBlocks, this.events, {
      numGroups: this.layout.groups.length,
      onEvict:
        cpu && !this.storeEvery ? (_group, _hash, block) => block && cpu.store([block]) : undefined,
    })
    this.hashes = new RequestHashes(this.layout, createBlockHasher(options.hashSeed))
  }

  get numBlocks(): number {
    return this.pool.numBlocks
  }

  get usage(): number {
    return this.pool.usage
  }

  /** Blocks in the CPU tier (0 without one). */
  get cpuBlocks(): number {
    return this.cpu?.size ?? 0
  }

  /**
   * `get_computed_blocks`, then the connector's `get_num_new_matched_tokens`: the longest
   * cached prefix, at most n−1 tokens, and the CPU-tier blocks that follow it. Counted at
   * every lookup, preempted requests apart (`PrefixCacheStats.record`). With
   * kv_cache_report_mode "full", the reused blocks are announced again (PR #45261).
   */
  lookup(request: RequestBlocks, preempted: boolean): CacheHit {
    const maxLength = request.tokens.length - 1
    this.hashes.ensure(request, maxLength)
    const blockOf = (group: number, index: number) =>
      this.pool.lookup(group, this.hashes.of(request, group, index))
    const hit = longestCacheHit(
      attentionTypes(this.layout, blockOf),
      this.layout.groups.length,
      maxLength,
      this.layout.hitAlignment,
    )
    this.counters.recordLookup(request.tokens.length, hit.tokens, preempted)
    if (request.reportReuse && hit.tokens > 0) {
      const hashOf = (group: number, index: number) => this.hashes.of(request, group, index)
      this.events.push(...reuseEvents(this.layout, request, hit.blocks, hashOf))
    }
    const external = this.external(request, hit.tokens)
    return {
      blocks: hit.blocks,
      localTokens: hit.tokens,
      externalTokens: external.tokens,
      deferred: external.deferred,
      preempted,
    }
  }

  /**
   * `allocate_slots` for `count` more tokens after `numComputed` (a new request passes its
   * hit instead): frees sliding-window blocks left behind, refuses (false) when the free
   * blocks cannot cover the new ones and the hit blocks taken off the free list, then
   * takes the hit, allocates, and caches the blocks that fill; a hit with CPU-tier tokens
   * caches only its local blocks, the loaded ones once the load completes
   * (`delay_cache_blocks`, `scheduler.py`).
   */
  allocateSlots(
    request: RequestBlocks,
    numComputed: number,
    count: number,
    hit: CacheHit | null,
  ): boolean {
    const computed = hit ? hit.localTokens + hit.externalTokens : numComputed
    const needTokens = computed + count
    if (!hit)
      for (const group of this.layout.groups) this.removeSkipped(request, group.index, computed)
    let needBlocks = 0
    let evictable = 0
    for (const { index, blockSize } of this.layout.groups) {
      const required = Math.ceil(needTokens / blockSize)
      if (!hit) {
        needBlocks += Math.max(required - (request.blocks[index]?.length ?? 0), 0)
        continue
      }
      const hitBlocks = hit.blocks[index] ?? []
      const skipped = Math.floor(this.skippedTokens(index, computed) / blockSize)
      needBlocks += Math.max(required - Math.max(skipped, hitBlocks.length), 0)
      for (const block of hitBlocks.slice(skipped)) if (this.pool.isEvictable(block)) evictable++
    }
    if (needBlocks > this.pool.numFree - evictable) return false
    for (const { index, blockSize } of this.layout.groups) {
      const blocks = hit
        ? this.takeHit(request, index, hit, computed)
        : (request.blocks[index] ?? [])
      const missing = Math.ceil(needTokens / blockSize) - blocks.length
      if (missing > 0) blocks.push(...this.pool.allocate(missing))
    }
    this.cacheBlocks(request, hit && hit.externalTokens > 0 ? hit.localTokens : needTokens)
    if (hit && this.cpu) {
      const queries = request.tokens.length - hit.localTokens
      this.counters.recordExternal(queries, hit.externalTokens, hit.preempted)
    }
    return true
  }

  /** A finished, aborted or preempted request's blocks go back, each group tail first. */
  free(request: RequestBlocks): void {
    for (const blocks of request.blocks) this.pool.release([...blocks].reverse())
    request.blocks = request.blocks.map(() => [])
    request.numCached = request.numCached.map(() => 0)
  }

  /** reset_prefix_cache: refused (false) while any block is in use; the CPU tier stays. */
  reset(): boolean {
    return this.pool.reset()
  }

  /**
   * Starts loading a hit's CPU-tier blocks into the blocks `allocateSlots` gave it, at
   * `nowMs`; returns when the load completes.
   */
  startLoad(request: RequestBlocks, hit: CacheHit, nowMs: number): number {
    const blockSize = this.layout.groups[0]?.blockSize ?? 1
    const hashOf = (index: number) => this.hashes.of(request, 0, index)
    const from = hit.localTokens / blockSize
    const count = hit.externalTokens / blockSize
    return this.cpu?.load(0, hashOf, from, count, nowMs) ?? nowMs
  }

  /** A completed load: its blocks, now holding the first `numTokens`, are cached. */
  finishLoad(request: RequestBlocks, numTokens: number): void {
    this.cacheBlocks(request, numTokens)
  }

  /** CPU-tier loads under way (the connector admits at most max_num_seqs at once). */
  get loads(): number {
    return this.cpu?.loads ?? 0
  }

  /** When the first CPU-tier transfer under way ends (null when none is). */
  get nextTransferEndMs(): number | null {
    return this.cpu?.nextTransferEndMs ?? null
  }

  /** Starts the CPU-tier copies the last scheduling prepared, at `startMs`. */
  submitStores(startMs: number): void {
    this.cpu?.submitStores(startMs)
  }

  /** Completes the transfers ended by `nowMs`; their events join the next batch. */
  settle(nowMs: number): void {
    this.cpu?.settle(nowMs)
  }

  /** This step's events: the KV-cache manager's, then the connector's. */
  takeEvents(): EngineKvEvent[] {
    const events = this.events.splice(0)
    for (const event of this.connectorEvents.splice(0)) events.push(event)
    return events
  }

  /**
   * CPU-tier tokens after a local hit; single-group models only (the connector's hybrid
   * chunking is not modelled, so a hybrid model's lookups find nothing in the tier).
   * Every full block of the request may come from the tier, the last one included
   * (`get_num_new_matched_tokens` looks up all of `request.block_hashes`): the scheduler
   * recomputes the last token after the load instead.
   */
  private external(request: RequestBlocks, localTokens: number) {
    const group = this.layout.groups[0]
    if (!this.cpu || !group || this.layout.groups.length !== 1)
      return { tokens: 0, deferred: false }
    this.hashes.ensure(request, request.tokens.length)
    const limit = Math.floor(request.tokens.length / group.blockSize)
    const from = localTokens / group.blockSize
    const hashOf = (index: number) => this.hashes.of(request, 0, index)
    const hit = this.cpu.lookup(0, hashOf, from, limit)
    return { tokens: hit.blocks * group.blockSize, deferred: hit.deferred }
  }

  /** `allocate_new_computed_blocks`: the hit blocks the window still needs, after nulls. */
  private takeHit(request: RequestBlocks, group: number, hit: CacheHit, computed: number) {
    const blockSize = this.layout.groups[group]?.blockSize ?? 1
    const skipped = Math.floor(this.skippedTokens(group, computed) / blockSize)
    const kept = (hit.blocks[group] ?? []).slice(skipped)
    this.pool.touch(kept)
    const blocks = [...new Array<number>(skipped).fill(nullBlock), ...kept]
    request.blocks[group] = blocks
    request.numCached[group] = blocks.length
    const external = Math.ceil(computed / blockSize) - blocks.length
    if (external > 0) blocks.push(...this.pool.allocate(external))
    return blocks
  }

  /** `get_num_skipped_tokens`: tokens before the window of the next token. */
  private skippedTokens(group: number, computed: number): number {
    const window = this.layout.groups[group]?.spec.slidingWindow
    return window ? Math.max(0, computed - window + 1) : 0
  }

  /** `remove_skipped_blocks`: frees the blocks the window has left, last first. */
  private removeSkipped(request: RequestBlocks, group: number, computed: number): void {
    const blocks = request.blocks[group] ?? []
    const blockSize = this.layout.groups[group]?.blockSize ?? 1
    const skipped = Math.min(
      Math.floor(this.skippedTokens(group, computed) / blockSize),
      blocks.length,
    )
    const removed: number[] = []
    for (let i = skipped - 1; i >= 0 && blocks[i] !== nullBlock; i--) {
      removed.push(blocks[i] as number)
      blocks[i] = nullBlock
    }
    this.pool.release(removed)
  }

  /** `cache_full_blocks` for every group: hash, cache and announce the blocks that filled. */
  private cacheBlocks(request: RequestBlocks, numTokens: number): void {
    this.hashes.ensure(request, numTokens)
    for (const group of this.layout.groups) {
      const { index, blockSize } = group
      const first = request.numCached[index] ?? 0
      const full = Math.floor(numTokens / blockSize)
      if (full <= first) continue
      const blocks = request.blocks[index] ?? []
      const hashes: bigint[] = []
      const extraKeys: (EngineExtraKey[] | null)[] = []
      const offloaded: OffloadedBlock[] = []
      for (let k = first; k < full; k++) {
        const block = blocks[k] as number
        if (block === nullBlock) continue
        const hash = this.hashes.of(request, index, k)
        const stored = this.cpu ? this.offloaded(request, index, k) : undefined
        this.pool.cache(block, index, hash, this.storeEvery ? undefined : stored)
        if (stored && this.storeEvery) offloaded.push(stored)
        hashes.push(hash)
        extraKeys.push(blockExtraKeys(request.source, k * blockSize, (k + 1) * blockSize))
      }
      this.events.push({
        type: 'BlockStored',
        medium: 'GPU',
        blockHashes: hashes,
        parentBlockHash: first > 0 ? this.hashes.of(request, index, first - 1) : null,
        tokenIds: request.tokens.slice(first * blockSize, full * blockSize),
        blockSize,
        loraName: request.source.loraName,
        loraId: request.loraId,
        extraKeys,
        groupIdx: index,
        kvCacheSpec: group.spec,
      })
      if (offloaded.length > 0) this.cpu?.store(offloaded)
      request.numCached[index] = full
    }
  }

  private offloaded(request: RequestBlocks, group: number, index: number): OffloadedBlock {
    const spec = this.layout.groups[group] as KvCacheLayout['groups'][number]
    return {
      group: spec,
      hash: this.hashes.of(request, group, index),
      parent: index > 0 ? this.hashes.of(request, group, index - 1) : null,
      tokenIds: request.tokens.slice(index * spec.blockSize, (index + 1) * spec.blockSize),
      loraName: request.source.loraName,
      loraId: request.loraId,
    }
  }
}
