import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { KvIndex } from '../../shared/kv-index/kv-index.ts'
import type { TierHoldings } from '../../shared/kv-index/tier-holdings.ts'
import type { EventBatch } from '../kv-events/kv-cache-event.ts'
import { PodFeed, type PodFeedSource, sameFeedSource } from './pod-feed.ts'

/** One runtime's use of a pod's feed. */
export interface PodFeedLease {
  readonly feed: PodFeed
  /** Settles once the pod's history is in the index (at once for a feed already running). */
  readonly started: Promise<void>
  /** Stops listening; the last lease of a pod closes its feed and drops its entries. */
  release(): Promise<void>
}

export interface PodFeedsOptions {
  index: KvIndex
  /** Where the pods' non-GPU tiers are kept (tier-holdings.ts); not kept without. */
  tiers?: TierHoldings
  /** Pods without their own events endpoint get their batches from the scorer's bound socket. */
  sharedEvents: boolean
  onError: (message: string) => void
  /** A pod's events carry this block size (first seen, or changed): its pools key requests with it. */
  onBlockSize?: (pod: string, blockSize: number) => void
}

interface Entry {
  feed: PodFeed
  started: Promise<void>
  users: number
}

/**
 * The pods' feeds, one per pod name, shared by the pool runtimes that route to the pod (a
 * draining runtime and its successor): a pod's subscription and index entries live as
 * long as one runtime uses it, and no longer.
 */
export class PodFeeds {
  private readonly options: PodFeedsOptions
  private readonly entries = new Map<string, Entry>()
  /** Feeds being closed: a new feed of the same pod starts once its entries are gone. */
  private readonly closing = new Map<string, Promise<void>>()

  constructor(options: PodFeedsOptions) {
    this.options = options
  }

  /**
   * The pod's feed, started if new; `onReady` hears its readiness until the lease is
   * released. A pod is fed from one source at a time: release it everywhere before
   * changing its source.
   */
  acquire(source: PodFeedSource, onReady: (ready: boolean) => void): PodFeedLease {
    const entry = this.entries.get(source.pod) ?? this.open(source)
    if (!sameFeedSource(entry.feed.source, source))
      throw new KinfError('internal', `pod ${source.pod} is fed from another source already`)
    entry.users++
    const unlisten = entry.feed.listen(onReady)
    let released = false
    return {
      feed: entry.feed,
      started: entry.started,
      release: async () => {
        if (released) return
        released = true
        unlisten()
        if (--entry.users === 0) await this.close(entry)
      },
    }
  }

  get(pod: string): PodFeed | undefined {
    return this.entries.get(pod)?.feed
  }

  /** A batch from the shared bound socket for `pod`; false when no feed takes it. */
  deliver(pod: string, seq: bigint, batch: EventBatch): boolean {
    return this.entries.get(pod)?.feed.deliver(seq, batch) ?? false
  }

  private open(source: PodFeedSource): Entry {
    const feed = new PodFeed({ ...this.options, source })
    const before = this.closing.get(source.pod) ?? Promise.resolve()
    const entry: Entry = { feed, users: 0, started: before.then(() => feed.start()) }
    this.entries.set(source.pod, entry)
    return entry
  }

  private async close(entry: Entry): Promise<void> {
    const { pod } = entry.feed.source
    if (this.entries.get(pod) === entry) this.entries.delete(pod)
    // Not after its start: a replay under way applies nothing once the feed is closed.
    const closed = entry.feed.close().finally(() => {
      if (this.closing.get(pod) === closed) this.closing.delete(pod)
    })
    this.closing.set(pod, closed)
    await closed
  }
}
