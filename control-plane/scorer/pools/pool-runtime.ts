import type { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import type { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { KvIndex } from '../../../shared/kv-index/kv-index.ts'
import type { TierLookup } from '../../../shared/kv-index/tier-lookup.ts'
import type { OpenAiRequest } from '../../../shared/openai/openai-request.ts'
import {
  type PoolLookup,
  type PoolRequest,
  PoolRouter,
  type ResolvedModel,
} from '../../../shared/routing/pool-router.ts'
import type { StrategyRegistry } from '../../../shared/routing/strategies/define-strategy.ts'
import type { PoolCondition } from '../../../shared/state/pool-state.ts'
import type { PodFeedSource } from '../../kv-feeds/pod-feed.ts'
import { type PodFeedLease, PodFeeds } from '../../kv-feeds/pod-feeds.ts'
import { type Prompt, promptOf } from '../../tokenizer/prompt-ids.ts'
import type { Tokenizer } from '../../tokenizer/tokenizer.ts'
import type { ScorerMetrics } from '../metrics/scorer-metrics.ts'
import type { ScorerPod } from '../scorer-config.ts'
import { TokenizationGuard } from '../serving/tokenization-guard.ts'
import type { TokenizationGuardOptionsInput } from '../serving/tokenization-options.ts'
import type { TokenizerCache, TokenizerEntry } from '../serving/tokenizer-cache.ts'
import { type HoldOutcome, PoolAdmission, type Waiter } from './pool-admission.ts'
import { type ConditionNow, PoolConditions } from './pool-conditions.ts'
import { UsageCount } from './usage-count.ts'

interface PodRuntime {
  endpoint: ScorerPod
  lease: PodFeedLease
}

export interface PoolRuntimeOptions {
  /** namespace/name; the name when absent (a pool given without namespace). */
  id?: string
  name: string
  namespace?: string | null
  spec: InferencePoolSpec
  /** The strategies the spec's routing names one of; the built-in ones when absent. */
  strategies?: StrategyRegistry
  index: KvIndex
  /** The pods' CPU tiers as the router looks them up (absent: GPU hits only). */
  tiers?: TierLookup
  /**
   * The pods' KV-event feeds, shared with the scorer's other runtimes (one replacing this
   * one, say); this runtime's own when absent.
   */
  feeds?: PodFeeds
  /** The tokenizers by source, shared by the scorer's runtimes. */
  tokenizers: TokenizerCache
  /** When disagreeing counts mark the pool (see TokenizationGuard); the defaults unless told. */
  guard?: TokenizationGuardOptionsInput
  onError: (message: string) => void
  /** Randomness of the strategy's choices (Math.random unless told). */
  random?: () => number
  /** A request held by late binding left the queue. */
  onHoldEnd?: (heldMs: number, outcome: HoldOutcome) => void
  /** Counts the pool's tokenizations and index lookups (the scorer's /metrics). */
  counters?: Pick<ScorerMetrics, 'tokenizations' | 'lookups'>
}

/** The feed a pod of a pool with this spec takes its KV events from. */
export function feedSourceOf(pod: ScorerPod, spec: InferencePoolSpec): PodFeedSource {
  return {
    pod: pod.name,
    model: spec.models[0]?.name ?? '',
    events: pod.events,
    replay: pod.replay,
  }
}

/**
 * One pool under one spec, as the scorer runs it: its router (shared/routing) with the
 * late-binding glue of this process, its pods (their KV-event feeds are shared with any
 * other runtime routing to them), and the tokenizer of each served model. A new spec is
 * a new runtime; this one serves the requests that started on it until they are done.
 */
export class PoolRuntime {
  readonly id: string
  readonly name: string
  readonly namespace: string | null
  readonly spec: InferencePoolSpec
  readonly router: PoolRouter<Waiter>
  readonly admission: PoolAdmission
  /** Requests that may still use this runtime (see LivePools.lease). */
  readonly usage = new UsageCount()
  /** The pods' counts against the scorer's (TokenizationAgrees). */
  readonly guard: TokenizationGuard
  private readonly tokenizerCondition = new PoolConditions()
  private readonly options: PoolRuntimeOptions
  private readonly feeds: PodFeeds
  private readonly pods = new Map<string, PodRuntime>()
  private readonly topicPattern: RegExp
  private isClosed = false

  constructor(options: PoolRuntimeOptions) {
    this.options = options
    this.id = options.id ?? options.name
    this.name = options.name
    this.namespace = options.namespace ?? null
    this.spec = options.spec
    // Feeds of its own tell this pool alone the block size its pods announce (start-scorer
    // tells every pool routing to a shared feed's pod).
    this.feeds =
      options.feeds ??
      new PodFeeds({
        index: options.index,
        sharedEvents: false,
        onError: options.onError,
        onBlockSize: (_pod, size) => this.router.learnBlockSize(size),
      })
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
      ...(options.strategies && { strategies: options.strategies }),
      index: options.index,
      ...(options.tiers && { tiers: options.tiers }),
      random: options.random ?? Math.random,
      // Replicas share the index: its entries expire on wall time.
      indexNowMs: Date.now,
      onError: options.onError,
    })
    this.admission = new PoolAdmission({ router: this.router, onHoldEnd: options.onHoldEnd })
    this.guard = new TokenizationGuard(options.guard)
  }

  /**
   * The served model (or LoRA adapter) `model`, and the tokenizer of its base model: null
   * when it cannot be loaded, and the pool routes that model on load alone.
   */
  serves(model: string): { model: ResolvedModel; tokenizer: Tokenizer | null } | null {
    const served = this.router.served(model)
    return (
      served && { model: served, tokenizer: this.options.tokenizers.tokenizer(served.tokenizer) }
    )
  }

  /** A tokenizer source as the pool's cache has it: loaded, or why not. */
  tokenizerState(source: string): TokenizerEntry {
    return this.options.tokenizers.get(source)
  }

  /** Whether every served model's tokenizer is loaded (false: some route on load alone). */
  get tokenizerReady(): boolean {
    return this.spec.models.every((m) => this.options.tokenizers.get(m.tokenizer).ok)
  }

  /** TokenizerReady and TokenizationAgrees as of `nowMs` (wall), for the shared state. */
  conditions(nowMs: number): PoolCondition[] {
    return [this.tokenizerCondition.set(this.tokenizerNow(), nowMs), this.guard.condition(nowMs)]
  }

  private tokenizerNow(): ConditionNow {
    const sources = [...new Set(this.spec.models.map((m) => m.tokenizer))]
    const failed = sources.flatMap((source) => {
      const entry = this.options.tokenizers.get(source)
      if (entry.ok) return []
      const models = this.spec.models.filter((m) => m.tokenizer === source).map((m) => m.name)
      return [
        `tokenizer ${source} (model ${models.join(', ')}) cannot be loaded: ${entry.error.message}`,
      ]
    })
    if (failed.length === 0)
      return {
        type: 'TokenizerReady',
        status: 'True',
        reason: 'TokenizerLoaded',
        message: `loaded: ${sources.join(', ')}`,
        example: null,
      }
    return {
      type: 'TokenizerReady',
      status: 'False',
      reason: 'TokenizerUnavailable',
      message: `${failed.join('; ')}. Its requests route on load alone (no cache-aware routing) until it loads: it is tried again on each new snapshot and periodically`,
      example: null,
    }
  }

  /**
   * The prompt ids of a request, as the pool's pods compute them (counted); `bodyText` is
   * the JSON text the pod gets, when the request was parsed from it (see promptIds).
   */
  tokenize(tokenizer: Tokenizer, request: OpenAiRequest, bodyText: string | null = null): Prompt {
    this.options.counters?.tokenizations.labels({ pool: this.name }).inc()
    return promptOf(tokenizer, request, bodyText)
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

  /** Where the pod's load signals are read: its own metrics URL, or the pool's path. */
  metricsUrl(pod: ScorerPod): string {
    return pod.metrics ?? new URL(this.spec.metrics.path, pod.http).toString()
  }

  ingestorCounters(name: string) {
    return this.pods.get(name)?.lease.feed.counters ?? null
  }

  /** The pod's KV-event stream position (see PodFeed.position). */
  feedPosition(name: string) {
    return this.pods.get(name)?.lease.feed.position ?? null
  }

  /** A pod joins: routed at once (cache-cold until its feed has replayed its history). */
  async addPod(endpoint: ScorerPod): Promise<void> {
    if (this.pods.has(endpoint.name)) await this.removePod(endpoint.name)
    // In the router first: a feed already running tells its readiness at once.
    this.router.addPod(endpoint.name, performance.now())
    let lease: PodFeedLease
    try {
      lease = this.feeds.acquire(feedSourceOf(endpoint, this.spec), (ready) =>
        this.router.setIndexReady(endpoint.name, ready),
      )
    } catch (error) {
      this.router.removePod(endpoint.name, performance.now())
      throw error
    }
    this.pods.set(endpoint.name, { endpoint, lease })
    await lease.started
  }

  /** The pod a topic names, by the pool's topic template ({pod} and {model}). */
  podOfTopic(topic: string): string | null {
    return this.topicPattern.exec(topic)?.groups?.pod ?? null
  }

  /** The pod's process restarted (seen in its metrics): forget its blocks and replay. */
  async restartDetected(name: string): Promise<void> {
    await this.pods.get(name)?.lease.feed.restart()
  }

  /** The pod stopped answering: its entries are dropped until it restarts (PodFeed.suspend). */
  async podUnreachable(name: string): Promise<void> {
    await this.pods.get(name)?.lease.feed.suspend()
  }

  /**
   * A pod gone: no request goes to it from now on; its index entries are dropped once no
   * other runtime routes to it.
   */
  async removePod(name: string): Promise<void> {
    const runtime = this.pods.get(name)
    if (!runtime) return
    this.pods.delete(name)
    this.router.removePod(name, performance.now())
    await runtime.lease.release()
  }

  /** Closed: it holds no pod and takes no request. */
  get closed(): boolean {
    return this.isClosed
  }

  /** Held requests are answered with `error` first (see PoolAdmission.close). */
  async close(error?: KinfError): Promise<void> {
    this.isClosed = true
    await this.admission.close(error)
    for (const name of [...this.pods.keys()]) await this.removePod(name)
  }
}
