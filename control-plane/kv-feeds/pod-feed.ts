import type { KvIndex } from '../../shared/kv-index/kv-index.ts'
import type { TierHoldings } from '../../shared/kv-index/tier-holdings.ts'
import {
  createKvEventSubscriber,
  type KvEventSubscriber,
} from '../kv-events/create-kv-event-subscriber.ts'
import type { EventBatch } from '../kv-events/kv-cache-event.ts'
import { type IngestorCounters, PodEventIngestor } from './pod-event-ingestor.ts'

/** Where a pod's KV events come from and what seeds their keys: another source, another feed. */
export interface PodFeedSource {
  pod: string
  /** The served model whose name seeds the pod's block keys (its pool's first). */
  model: string
  /** The pod's PUB socket; null when it publishes none, or to the scorer's bound socket. */
  events: string | null
  replay: string | null
}

export interface PodFeedOptions {
  source: PodFeedSource
  index: KvIndex
  /** Where the pod's non-GPU tiers are kept; not kept without. */
  tiers?: TierHoldings | undefined
  /** Pods without their own events endpoint get their batches from the scorer's bound socket. */
  sharedEvents: boolean
  onError: (message: string) => void
  /** The block size the pod's full-attention events carry, when first seen and when it changes. */
  onBlockSize?: ((pod: string, blockSize: number) => void) | undefined
}

export function sameFeedSource(a: PodFeedSource, b: PodFeedSource): boolean {
  return a.pod === b.pod && a.model === b.model && a.events === b.events && a.replay === b.replay
}

/**
 * One pod's presence in the index: its KV-event subscription and ingestor (none when the
 * pod publishes no events: it is routed on load alone), whether its index can be believed
 * now, told to every listener (each pool runtime routing to the pod), and, at close, the
 * pod's entries dropped, speculative ones included.
 */
export class PodFeed {
  readonly source: PodFeedSource
  private readonly options: PodFeedOptions
  private readonly ingestor: PodEventIngestor | null
  private subscriber: KvEventSubscriber | null = null
  private readonly listeners = new Set<(ready: boolean) => void>()
  private ready = false
  private closed = false

  constructor(options: PodFeedOptions) {
    this.options = options
    this.source = options.source
    const { pod, model, events, replay } = options.source
    this.ingestor =
      events === null && !options.sharedEvents
        ? null
        : new PodEventIngestor({
            pod,
            model,
            index: options.index,
            tiers: options.tiers,
            replayEndpoint: replay,
            onReady: (ready) => this.setReady(ready),
            onError: options.onError,
            onBlockSize: (size) => options.onBlockSize?.(pod, size),
          })
  }

  get counters(): IngestorCounters | null {
    return this.ingestor?.counters ?? null
  }

  /** The block size of the pod's indexed blocks, from its events; null before one or without events. */
  get blockSize(): number | null {
    return this.ingestor?.blockSize ?? null
  }

  /** Where the pod's stream stands: the last seq applied and when; null without events. */
  get position(): { seq: bigint | null; atMs: number | null } | null {
    const { ingestor } = this
    return ingestor && { seq: ingestor.appliedSeq, atMs: ingestor.lastAppliedAtMs }
  }

  /** Subscribes and replays the pod's history; resolves once the replay is applied. */
  async start(): Promise<void> {
    const { ingestor } = this
    const { pod, events } = this.source
    if (!ingestor || this.closed) return
    if (events !== null) {
      this.subscriber = createKvEventSubscriber({
        endpoint: events,
        onBatch: (_topic, seq, batch) => void ingestor.receive(seq, batch),
        onError: (error) => this.options.onError(`${pod}: ${error.message}`),
      })
    }
    await ingestor.start()
  }

  /** `listener` hears the readiness now, then every change; the returned function stops it. */
  listen(listener: (ready: boolean) => void): () => void {
    this.listeners.add(listener)
    listener(this.ready)
    return () => this.listeners.delete(listener)
  }

  /** A batch from the shared bound socket whose topic names this pod; false without events. */
  deliver(seq: bigint, batch: EventBatch): boolean {
    if (!this.ingestor || this.closed) return false
    void this.ingestor.receive(seq, batch)
    return true
  }

  /** The pod's process restarted (seen in its metrics): forget its blocks and replay. */
  async restart(): Promise<void> {
    await this.ingestor?.restart()
  }

  /**
   * The pod stopped answering: its cache went with its process, so its entries (speculative
   * ones too) are dropped and nothing is applied until restart().
   */
  async suspend(): Promise<void> {
    if (this.closed) return
    if (this.ingestor) await this.ingestor.suspend()
    else
      await this.options.index
        .dropPod(this.source.pod)
        .catch((error: unknown) =>
          this.options.onError(
            `${this.source.pod}: dropping its entries failed: ${(error as Error).message}`,
          ),
        )
  }

  /** Nothing more is applied, the pod's entries are dropped, the subscription is closed. */
  async close(): Promise<void> {
    this.closed = true
    this.listeners.clear()
    this.ingestor?.close()
    // Called before any await: a later feed of the same pod drops and replays after this.
    const dropped = Promise.all([
      this.options.index.dropPod(this.source.pod),
      this.options.tiers?.dropPod(this.source.pod),
    ])
    await this.subscriber?.close()
    await dropped
  }

  private setReady(ready: boolean): void {
    if (this.closed) return
    this.ready = ready
    for (const listener of this.listeners) listener(ready)
  }
}
