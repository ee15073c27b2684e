import type { InferencePoolSpec } from '../../shared/crd/inference-pool.ts'
import type { KvIndex } from '../../shared/kv-index/kv-index.ts'
import type { OpenAiRequest } from '../../shared/openai/openai-request.ts'
import {
  type PoolLookup,
  type PoolRequest,
  PoolRouter,
  type ServedModel,
} from '../../shared/pool/pool-router.ts'
import {
  createKvEventSubscriber,
  type KvEventSubscriber,
} from '../kv-events/create-kv-event-subscriber.ts'
import type { EventBatch } from '../kv-events/kv-cache-event.ts'
import { createTokenizer } from '../tokenizer/create-tokenizer.ts'
import { promptIds } from '../tokenizer/prompt-ids.ts'
import type { Tokenizer } from '../tokenizer/tokenizer.ts'
import { PodEventIngestor } from './pod-event-ingestor.ts'
import { type HoldOutcome, PoolAdmission, type Waiter } from './pool-admission.ts'
import type { ScorerPod } from './scorer-config.ts'
import type { ScorerMetrics } from './scorer-metrics.ts'

interface PodRuntime {
  endpoint: ScorerPod
  ingestor: PodEventIngestor | null
  subscriber: KvEventSubscriber | null
}

export interface PoolRuntimeOptions {
  name: string
  spec: InferencePoolSpec
  index: KvIndex
  tokenizers: (name: string) => Tokenizer
  onError: (message: string) => void
  /** Pods without their own events endpoint get their batches from a shared bound socket. */
  sharedEvents?: boolean
  /** Randomness of the strategy's choices (Math.random unless told). */
  random?: () => number
  /** A request held by late binding left the queue. */
  onHoldEnd?: (heldMs: number, outcome: HoldOutcome) => void
  /** Counts the pool's tokenizations and index lookups (the scorer's /metrics). */
  counters?: Pick<ScorerMetrics, 'tokenizations' | 'lookups'>
}

/**
 * One pool as the scorer runs it: its router (shared/pool) with the late-binding glue of
 * this process, the pods with their KV-event subscriptions and index ingestion, and the
 * tokenizer of each served model.
 */
export class PoolRuntime {
  readonly name: string
  readonly spec: InferencePoolSpec
  readonly router: PoolRouter<Waiter>
  readonly admission: PoolAdmission
  private readonly options: PoolRuntimeOptions
  private readonly pods = new Map<string, PodRuntime>()
  private readonly topicPattern: RegExp

  constructor(options: PoolRuntimeOptions) {
    this.options = options
    this.name = options.name
    this.spec = options.spec
    const template = (options.spec.kvEvents?.topic ?? 'kv@{pod}@{model}').replace(
      /[.*+?^$()|[\]\\]/g,
      '\\$&',
    )
    this.topicPattern = new RegExp(
      `^${template.replace('{pod}', '(?<pod>.+?)').replace('{model}', '.*')}$`,
    )
    this.router = new PoolRouter<Waiter>({
      name: options.name,
      spec: options.spec,
      index: options.index,
      random: options.random ?? Math.random,
      // Replicas share the index: its entries expire on wall time.
      indexNowMs: Date.now,
      onError: options.onError,
    })
    this.admission = new PoolAdmission({ router: this.router, onHoldEnd: options.onHoldEnd })
  }

  /** The served model (or LoRA adapter) `model`, and the tokenizer of its base model. */
  serves(model: string): { model: ServedModel; tokenizer: Tokenizer } | null {
    const served = this.router.served(model)
    return served && { model: served, tokenizer: this.options.tokenizers(served.tokenizer) }
  }

  /** The prompt ids of a request, as the pool's pods compute them (counted). */
  tokenize(tokenizer: Tokenizer, request: OpenAiRequest): number[] {
    this.options.counters?.tokenizations.labels({ pool: this.name }).inc()
    return promptIds(tokenizer, request)
  }

  /** One index lookup for every pod of the pool (counted). */
  lookup(request: PoolRequest): Promise<PoolLookup> {
    this.options.counters?.lookups.labels({ pool: this.name }).inc()
    return this.router.lookup(request)
  }

  endpoints(): ScorerPod[] {
    return [...this.pods.values()].map((pod) => pod.endpoint)
  }

  endpoint(name: string): ScorerPod | undefined {
    return this.pods.get(name)?.endpoint
  }

  ingestorCounters(name: string) {
    return this.pods.get(name)?.ingestor?.counters ?? null
  }

  async addPod(endpoint: ScorerPod): Promise<void> {
    if (this.pods.has(endpoint.name)) await this.removePod(endpoint.name)
    const runtime: PodRuntime = { endpoint, ingestor: null, subscriber: null }
    this.pods.set(endpoint.name, runtime)
    this.router.addPod(endpoint.name, performance.now())
    if (endpoint.events === null && !this.options.sharedEvents) {
      // No KV events: the pod is routed on load alone (its index stays empty).
      this.router.setIndexReady(endpoint.name, false)
      return
    }
    const model = this.spec.models[0]?.name ?? ''
    const ingestor = new PodEventIngestor({
      pod: endpoint.name,
      model,
      index: this.options.index,
      replayEndpoint: endpoint.replay,
      onReady: (ready) => this.router.setIndexReady(endpoint.name, ready),
      onError: this.options.onError,
    })
    runtime.ingestor = ingestor
    if (endpoint.events !== null) {
      runtime.subscriber = createKvEventSubscriber({
        endpoint: endpoint.events,
        onBatch: (_topic, seq, batch) => void ingestor.receive(seq, batch),
        onError: (error) => this.options.onError(`${endpoint.name}: ${error.message}`),
      })
    }
    await ingestor.start()
  }

  /** A batch from the shared bound socket whose topic names this pod; false if unknown. */
  deliver(pod: string, seq: bigint, batch: EventBatch): boolean {
    const ingestor = this.pods.get(pod)?.ingestor
    if (!ingestor) return false
    void ingestor.receive(seq, batch)
    return true
  }

  /** The pod a topic names, by the pool's topic template ({pod} and {model}). */
  podOfTopic(topic: string): string | null {
    return this.topicPattern.exec(topic)?.groups?.pod ?? null
  }

  /** The pod's process restarted (seen in its metrics): forget its blocks and replay. */
  async restartDetected(name: string): Promise<void> {
    await this.pods.get(name)?.ingestor?.restart()
  }

  /** A pod gone: its subscription closes and its index entries are dropped. */
  async removePod(name: string): Promise<void> {
    const runtime = this.pods.get(name)
    if (!runtime) return
    this.pods.delete(name)
    runtime.ingestor?.close()
    await runtime.subscriber?.close()
    this.router.removePod(name, performance.now())
    await this.options.index.dropPod(name)
  }

  /** Held requests are answered with an error first (see PoolAdmission.close). */
  async close(): Promise<void> {
    await this.admission.close()
    for (const name of [...this.pods.keys()]) await this.removePod(name)
  }
}

/** Tokenizers are costly to load (~250 ms): one per tokenizer name, shared by pools. */
export function createTokenizerCache(): (name: string) => Tokenizer {
  const cache = new Map<string, Tokenizer>()
  return (name) => {
    let tokenizer = cache.get(name)
    if (!tokenizer) {
      tokenizer = createTokenizer(name as 'qwen3')
      cache.set(name, tokenizer)
    }
    return tokenizer
  }
}
