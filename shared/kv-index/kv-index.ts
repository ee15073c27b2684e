import type { BlockExtras, BlockKeyChain } from './block-keys.ts'

/** A pod as the index knows it: its name in the pool (e.g. the Kubernetes pod name). */
export type PodId = string

/**
 * vLLM's KV events for one pod, as the index consumes them (decoded, validated, GPU tier
 * only). Engine hashes are vLLM's, used only to link BlockStored chains and to resolve
 * BlockRemoved; the index keys blocks by token ids (block-keys.ts).
 */
export type IndexEvent =
  | {
      type: 'stored'
      engineHashes: readonly bigint[]
      parentEngineHash: bigint | null
      tokenIds: ArrayLike<number>
      blockSize: number
      loraName: string | null
      /** cache_salt of the sequence, when the event carries it (first block's extra keys). */
      cacheSalt: string | null
      /**
       * Each block's other extra keys (multimodal inputs, prompt embeddings), aligned with
       * the blocks; absent or null when no block has any.
       */
      blockExtras?: BlockExtras | null
    }
  | { type: 'removed'; engineHashes: readonly bigint[] }
  | { type: 'cleared' }

export interface ApplyResult {
  stored: number
  removed: number
  /** BlockStored events whose parent block was never seen: their blocks stay unindexed (cold). */
  unknownParents: number
  /** BlockRemoved hashes the index did not know. */
  unknownRemovals: number
  /** The batch's seq was at or below the last one applied for the pod: nothing was done. */
  duplicate: boolean
}

/**
 * Which pod holds which blocks. One interface, two implementations that pass the same
 * conformance suite: in memory (the embedded default) and Redis (shared by scorer
 * replicas). Every method is safe to call with any pod name; unknown pods hold nothing.
 */
export interface KvIndex {
  /**
   * Applies one event batch of a pod, atomically (all of it or none). `model` seeds the
   * keys. With `seq`, a batch at or below the last seq applied for the pod is skipped:
   * scorer replicas sharing an index each apply every pod's stream, and only the first
   * application of a batch counts. dropPod forgets the last seq (a restarted pod's
   * stream starts again at 0).
   */
  apply(
    pod: PodId,
    model: string,
    events: readonly IndexEvent[],
    seq?: bigint,
  ): Promise<ApplyResult>
  /**
   * For each pod, the number of leading blocks of `chain` it holds (stored, or routed there
   * and not yet expired), aligned with `pods`. One round trip whatever the pod count.
   */
  lookup(chain: BlockKeyChain, pods: readonly PodId[], nowMs: number): Promise<number[]>
  /**
   * Speculative entries: a request with these blocks was just sent to `pod`; count them as
   * held until `expiresAtMs`, covering the time before the pod's own events arrive.
   */
  addSpeculative(
    pod: PodId,
    chain: BlockKeyChain,
    blocks: number,
    expiresAtMs: number,
  ): Promise<void>
  /** Forgets a pod entirely: gone, restarted, AllBlocksCleared, or its index not trustworthy. */
  dropPod(pod: PodId): Promise<void>
  /** Blocks each pod holds from its own events (speculative entries left out), aligned with `pods`. */
  storedBlocks(pods: readonly PodId[]): Promise<number[]>
  /** (block, pod) entries held, and pods with at least one, for metrics and tests. */
  size(): Promise<{ entries: number; pods: number }>
  close(): Promise<void>
}
