import { z } from 'zod'
import { functionOption, parseOptions } from '../../shared/config/parse-options.ts'
import type { KvIndex } from '../../shared/kv-index/kv-index.ts'
import type { TierEvent, TierHoldings } from '../../shared/kv-index/tier-holdings.ts'
import { AttentionGroup } from '../kv-events/attention-group.ts'
import type { DecodedEventBatch, SkippedEvent } from '../kv-events/kv-cache-event.ts'
import { requestReplay } from '../kv-events/request-replay.ts'
import { TimeoutMs } from '../kv-events/socket-options.ts'
import { toPodEvents } from '../kv-events/to-pod-events.ts'

export interface IngestorCounters {
  batches: number
  replays: number
  gaps: number
  restarts: number
  unrepairable: number
  applyErrors: number
  /** Batches whose tier events the tier holdings failed to take (the pod's tiers were dropped). */
  tierErrors: number
  /** Events left out of applied batches, one at a time, by reason (see SkipReason). */
  skipped: Record<string, number>
}

export const PodEventIngestorOptions = z.strictObject({
  pod: z.string(),
  model: z.string(),
  index: z.custom<KvIndex>((value) => typeof value === 'object' && value !== null),
  tiers: z
    .custom<TierHoldings>((value) => typeof value === 'object' && value !== null)
    .optional()
    .describe("Where the pod's non-GPU tiers go; without one they are not kept"),
  replayEndpoint: z
    .string()
    .nullable()
    .describe("The pod's replay ROUTER socket; without one a gap can only be survived cold"),
  replayTimeoutMs: TimeoutMs.default(2_000).describe(
    'Longest wait for the next replay reply message',
  ),
  onReady: functionOption<(ready: boolean) => void>().describe(
    'The index of this pod can (true) or cannot (false) be believed right now',
  ),
  onError: functionOption<(message: string) => void>(),
  onBlockSize: functionOption<(blockSize: number) => void>()
    .optional()
    .describe(
      "The block size of the pod's full-attention blocks, told when first seen and when it changes: the router keys requests with it (docs/vllm-wire.md §1.8)",
    ),
})
export type PodEventIngestorOptions = z.infer<typeof PodEventIngestorOptions>
export type PodEventIngestorOptionsInput = z.input<typeof PodEventIngestorOptions>

/**
 * Keeps one pod's index in step with its KV-event stream: batches are applied in seq
 * order; a gap triggers a replay from the first missing seq; a seq that goes backwards is
 * a new incarnation of the pod (vLLM restarts at 0 and sends no AllBlocksCleared), so its
 * entries are dropped and its history replayed; at start the history is replayed too.
 * While any of this is under way the pod is reported not ready (scored cache-cold), and
 * what cannot be repaired is dropped rather than left half-true.
 */
export class PodEventIngestor {
  readonly counters: IngestorCounters = {
    batches: 0,
    replays: 0,
    gaps: 0,
    restarts: 0,
    unrepairable: 0,
    applyErrors: 0,
    tierErrors: 0,
    skipped: {},
  }
  private readonly options: PodEventIngestorOptions
  private lastSeq: bigint | null = null
  /** Wall time of the last batch applied (inspect shows its age); null before one. */
  lastAppliedAtMs: number | null = null
  private syncing = false
  private closed = false
  /** The pod is gone (unreachable): nothing is applied until restart(). */
  private suspended = false
  private buffered: { seq: bigint; batch: DecodedEventBatch }[] = []
  /** Which of the pod's KV-cache groups is indexed (hybrid models). */
  private readonly groups = new AttentionGroup()
  private learnedBlockSize: number | null = null
  private queue: Promise<void> = Promise.resolve()

  constructor(input: PodEventIngestorOptionsInput) {
    this.options = parseOptions(PodEventIngestorOptions, input, 'pod event ingestor')
  }

  /** The block size the pod's indexed (full-attention) events carry; null before one. */
  get blockSize(): number | null {
    return this.learnedBlockSize
  }

  /** The seq of the last batch applied; null before one, or after the pod's entries were dropped. */
  get appliedSeq(): bigint | null {
    return this.lastSeq
  }

  /** Replays the pod's history (whatever its ring still holds) before live batches. */
  start(): Promise<void> {
    return this.enqueue(() => this.resync(0n, true))
  }

  /** The pod restarted (seen elsewhere than in its events): its index starts over. */
  restart(): Promise<void> {
    this.counters.restarts++
    this.suspended = false
    return this.enqueue(() => this.resync(0n, true))
  }

  /**
   * The pod is gone (it stopped answering): its cache went with its process, so its
   * entries are dropped and it is not ready until restart() replays what it holds then.
   */
  suspend(): Promise<void> {
    if (this.closed) return this.queue
    this.suspended = true
    this.buffered = []
    this.options.onReady(false)
    // At once, not behind a replay that may wait for the dead pod until its timeout.
    const dropped = this.dropEntries().catch((error: unknown) =>
      this.options.onError(
        `${this.options.pod}: dropping its entries failed: ${(error as Error).message}`,
      ),
    )
    return this.enqueue(async () => {
      await dropped
      if (this.suspended) this.lastSeq = null
    })
  }

  /** Nothing is applied after this, so a dropPod called next is the pod's last word. */
  close(): void {
    this.closed = true
  }

  /** A live batch from the SUB socket. */
  receive(seq: bigint, batch: DecodedEventBatch): Promise<void> {
    if (this.suspended) return this.queue
    if (this.syncing) {
      this.buffered.push({ seq, batch })
      return this.queue
    }
    return this.enqueue(() => this.handle(seq, batch))
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(task, task).catch((error: unknown) => {
      this.options.onError(`${this.options.pod}: ${(error as Error).message}`)
    })
    return this.queue
  }

  private async handle(seq: bigint, batch: DecodedEventBatch): Promise<void> {
    if (this.closed || this.suspended) return
    const last = this.lastSeq
    if (last !== null && seq === last) return
    if (last !== null && seq < last) {
      this.counters.restarts++
      this.buffered.push({ seq, batch })
      return this.resync(0n, true)
    }
    if (last !== null && seq > last + 1n) {
      this.counters.gaps++
      this.buffered.push({ seq, batch })
      return this.resync(last + 1n, false)
    }
    await this.apply(seq, batch)
  }

  private async resync(from: bigint, dropFirst: boolean): Promise<void> {
    this.syncing = true
    this.options.onReady(false)
    try {
      if (dropFirst) {
        await this.dropEntries()
        this.lastSeq = null
      }
      const replayed = await this.replay(from)
      // The ring no longer holds `from`: the gap cannot be filled, so start cold from here.
      if (replayed === null || (replayed[0]?.seq ?? from) !== from) {
        if (!(dropFirst && from === 0n)) this.counters.unrepairable++
        await this.dropEntries()
        this.lastSeq = null
      } else if (this.lastSeq === null) {
        // The replay answered: batches before `from` are accounted for, so the next one
        // expected is `from` and a later first live batch reveals a gap.
        this.lastSeq = from - 1n
      }
      const batches = [...(replayed ?? []), ...this.buffered.splice(0)].sort((a, b) =>
        a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0,
      )
      for (const { seq, batch } of batches) {
        if (this.lastSeq !== null && seq <= this.lastSeq) continue
        await this.apply(seq, batch)
      }
    } finally {
      this.syncing = false
    }
    // Batches that arrived while the last ones were applied.
    const late = this.buffered.splice(0)
    if (!this.suspended) this.options.onReady(true)
    for (const { seq, batch } of late) await this.handle(seq, batch)
  }

  private async replay(from: bigint): Promise<{ seq: bigint; batch: DecodedEventBatch }[] | null> {
    if (!this.options.replayEndpoint) return null
    this.counters.replays++
    try {
      return await requestReplay({
        endpoint: this.options.replayEndpoint,
        startSeq: from,
        timeoutMs: this.options.replayTimeoutMs,
      })
    } catch (error) {
      this.options.onError(
        `${this.options.pod}: replay from ${from} failed: ${(error as Error).message}`,
      )
      return null
    }
  }

  /** Counted by reason; the first of each reason is told, so the log names its cause. */
  private countSkipped(seq: bigint, skipped: readonly SkippedEvent[]): void {
    const counts = this.counters.skipped
    for (const { reason, message } of skipped) {
      const before = counts[reason] ?? 0
      counts[reason] = before + 1
      if (before === 0) {
        this.options.onError(`${this.options.pod}: skipped an event of batch ${seq}: ${message}`)
      }
    }
  }

  private async apply(seq: bigint, batch: DecodedEventBatch): Promise<void> {
    // A replay answered after close (or the pod's loss) must not bring its blocks back.
    if (this.closed || this.suspended) return
    const events = toPodEvents(batch.events, this.groups)
    try {
      await this.options.index.apply(this.options.pod, this.options.model, events.index, seq)
      if (events.tiers.length > 0) await this.applyTiers(seq, events.tiers)
      if (events.blockSize !== null && events.blockSize !== this.learnedBlockSize) {
        this.learnedBlockSize = events.blockSize
        this.options.onBlockSize?.(events.blockSize)
      }
      this.lastSeq = seq
      this.lastAppliedAtMs = Date.now()
      this.counters.batches++
      if (batch.skipped !== undefined) this.countSkipped(seq, batch.skipped)
    } catch (error) {
      // The index may now miss this batch: forget the pod and rebuild from the next one.
      this.counters.applyErrors++
      this.options.onError(
        `${this.options.pod}: applying batch ${seq} failed: ${(error as Error).message}`,
      )
      await this.dropEntries().catch(() => {})
      this.lastSeq = null
    }
  }

  /**
   * The batch's tier events. A failure costs the pod's tiers (dropped, so nothing half-true
   * is kept), not its GPU index, which took the batch.
   */
  private async applyTiers(seq: bigint, events: readonly TierEvent[]): Promise<void> {
    const { tiers, pod } = this.options
    if (tiers === undefined) return
    try {
      await tiers.apply(pod, events, seq)
    } catch (error) {
      this.counters.tierErrors++
      this.options.onError(
        `${pod}: tier events of batch ${seq} failed: ${(error as Error).message}`,
      )
      await tiers.dropPod(pod).catch(() => {})
    }
  }

  /** The pod's GPU index entries and tier holdings. */
  private async dropEntries(): Promise<void> {
    const { index, tiers, pod } = this.options
    await Promise.all([index.dropPod(pod), tiers?.dropPod(pod)])
  }
}
