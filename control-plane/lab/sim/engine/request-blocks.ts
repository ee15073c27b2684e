import { blockExtraKeys, type ExtraKeySource } from './block-extra-keys.ts'
import type { BlockHasher } from './block-hasher.ts'
import type { KvCacheLayout } from './kv-cache-layout.ts'

/**
 * A request as the KV-cache manager sees it: its tokens (prompt then generated, the
 * scheduler's array), its block hashes at the layout's hash block size (vLLM's
 * `Request.block_hashes`, kept across preemption), and per KV-cache group its blocks
 * (block 0 where a sliding window skipped one) and how many of them are cached.
 */
export interface RequestBlocks {
  readonly tokens: readonly number[]
  readonly source: ExtraKeySource
  readonly loraId: number | null
  /** kv_cache_report_mode "full" (vLLM PR #45261). */
  readonly reportReuse: boolean
  readonly hashes: bigint[]
  blocks: number[][]
  numCached: number[]
}

export function newRequestBlocks(
  layout: KvCacheLayout,
  tokens: readonly number[],
  source: ExtraKeySource,
  loraId: number | null,
  reportReuse: boolean,
): RequestBlocks {
  return {
    tokens,
    source,
    loraId,
    reportReuse,
    hashes: [],
    blocks: layout.groups.map(() => []),
    numCached: layout.groups.map(() => 0),
  }
}

/**
 * Block hashes of a request, computed as its tokens fill blocks (vLLM's
 * `get_request_block_hasher`), and the hash of a group's block: the last hash inside it
 * when the group's blocks are larger (`BlockHashListWithBlockSize`).
 */
export class RequestHashes {
  private readonly layout: KvCacheLayout
  private readonly hasher: BlockHasher

  constructor(layout: KvCacheLayout, hasher: BlockHasher) {
    this.layout = layout
    this.hasher = hasher
  }

  /** Makes sure the hashes of the first `numTokens` tokens' full hash blocks exist. */
  ensure(request: RequestBlocks, numTokens: number): void {
    const size = this.layout.hashBlockSize
    const count = Math.floor(Math.min(numTokens, request.tokens.length) / size)
    const { hashes, tokens, source } = request
    for (let k = hashes.length; k < count; k++) {
      const parent = k > 0 ? (hashes[k - 1] as bigint) : null
      const extra = blockExtraKeys(source, k * size, (k + 1) * size)
      hashes.push(this.hasher.hash(parent, tokens, k * size, size, extra))
    }
  }

  /** The hash of block `index` of `group` (its hashes must have been ensured). */
  of(request: RequestBlocks, group: number, index: number): bigint {
    const scale = (this.layout.groups[group]?.blockSize ?? 0) / this.layout.hashBlockSize
    return request.hashes[(index + 1) * scale - 1] as bigint
  }
}
