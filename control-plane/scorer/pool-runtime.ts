import type { InferencePoolSpec } from '../../shared/crd/inference-pool.ts'
import { gpuProfiles, numGpuBlocks } from '../../shared/gpu/gpu-profile.ts'
import { createStepCostModel } from '../../shared/gpu/step-cost-model.ts'
import { createKinferenceStrategy } from '../../shared/routing/kinference-strategy.ts'
import type { KvIndex } from '../../shared/routing/kv-index.ts'
import { RouterCore, type RouterCoreOptions } from '../../shared/routing/router-core.ts'
import type { RoutingStrategy, StepCost, TtftModel } from '../../shared/routing/routing-strategy.ts'
import { createRoutingStrategy } from '../../shared/routing/strategies/create-routing-strategy.ts'
import {
  createKvEventSubscriber,
  type KvEventSubscriber,
} from '../kv-events/create-kv-event-subscriber.ts'
import type { EventBatch } from '../kv-events/kv-cache-event.ts'
import { createTokenizer } from '../tokenizer/create-tokenizer.ts'
import type { Tokenizer } from '../tokenizer/tokenizer.ts'
import { PodEventIngestor } from './pod-event-ingestor.ts'
import { type HoldOutcome, PoolAdmission } from './pool-admission.ts'
import type { ScorerPod } from './scorer-config.ts'

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
}

/**
 * The TTFT model a new pod starts from: the pool's overrides, else its GPU profile's cost
 * model (a full prefill step per budget of tokens; a decode step of overhead).
 */
export function ttftPrior(spec: InferencePoolSpec): TtftModel {
  const budget = spec.scheduler.maxNumBatchedTokens
  const profile = gpuProfiles[spec.gpuProfile]
  let prior: TtftModel = { overheadMs: 50, msPerToken: 0.15 }
  if (profile) {
    const cost = createStepCostModel(profile)
    prior = {
      overheadMs: cost.stepMs({
        tokens: 1,
        decodeContext: 2048,
        prefillContext: 0,
        prefillAttention: 0,
      }),
      msPerToken:
        cost.stepMs({
          tokens: budget,
          decodeContext: 0,
          prefillContext: budget,
          prefillAttention: (budget * budget) / 2,
        }) / budget,
    }
  }
  const overrides = spec.routing.kinference
  if (overrides?.prefillTokensPerSecond)
    prior = { ...prior, msPerToken: 1000 / overrides.prefillTokensPerSecond }
  if (overrides?.overheadMs !== undefined) prior = { ...prior, overheadMs: overrides.overheadMs }
  return prior
}

/** What a pod's decode step costs, from the pool's GPU profile (a generic GPU without one). */
export function stepCostOf(spec: InferencePoolSpec): StepCost {
  const profile = gpuProfiles[spec.gpuProfile]
  if (!profile) return { decodeStepMs: 30, msPerContextToken: 2e-4 }
  const cost = createStepCostModel(profile)
  const empty = { tokens: 1, prefillContext: 0, prefillAttention: 0 }
  const base = cost.stepMs({ ...empty, decodeContext: 0 })
  return {
    decodeStepMs: base,
    msPerContextToken: (cost.stepMs({ ...empty, decodeContext: 100_000 }) - base) / 100_000,
  }
}

/** KV-cache tokens per pod before its metrics say: the pool's numGpuBlocks, or the profile's. */
export function kvCapacityOf(spec: InferencePoolSpec): number | null {
  const profile = gpuProfiles[spec.gpuProfile]
  const blocks = spec.scheduler.numGpuBlocks ?? (profile ? numGpuBlocks(profile) : null)
  return blocks === null ? null : blocks * spec.blockSize
}

/** The routing core of a pool: its strategy, TTFT prior, memory and step cost. */
export function routerCoreOptions(spec: InferencePoolSpec): RouterCoreOptions {
  const kinference = spec.routing.kinference
  return {
    strategy: createPoolStrategy(spec),
    stepBudget: spec.scheduler.maxNumBatchedTokens,
    prior: ttftPrior(spec),
    onlineCalibration: kinference?.onlineCalibration ?? true,
    forgettingFactor: kinference?.forgettingFactor ?? 0.98,
    driftTolerance: kinference?.driftTolerance ?? 0.25,
    metricsStalenessMs: spec.metrics.stalenessMs,
    unhealthyCooldownMs: 5_000,
    kvCapacityTokens: kvCapacityOf(spec),
    stepCost: stepCostOf(spec),
  }
}

/** The routing strategy a pool names, with its parameters. */
export function createPoolStrategy(spec: InferencePoolSpec): RoutingStrategy {
  if (spec.routing.strategy === 'kinference') {
    return createKinferenceStrategy({
      stepBudget: spec.scheduler.maxNumBatchedTokens,
      copyHeadroom: spec.routing.kinference?.copyHeadroom ?? 0.85,
    })
  }
  return createRoutingStrategy(spec.routing.strategy, spec.routing)
}

/**
 * One pool as the scorer runs it: the routing core and its late-binding admission queue,
 * the pods with their KV-event subscriptions and index ingestion, and the tokenizer of
 * each served model.
 */
export class PoolRuntime {
  readonly name: string
  readonly spec: InferencePoolSpec
  readonly core: RouterCore
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
    this.core = new RouterCore(routerCoreOptions(options.spec))
    this.admission = new PoolAdmission({
      core: this.core,
      spec: options.spec,
      random: options.random ?? Math.random,
      onHoldEnd: options.onHoldEnd,
    })
  }

  /** The served model (or LoRA adapter) `model`, and the base model whose tokenizer applies. */
  serves(
    model: string,
  ): { baseModel: string; tokenizer: Tokenizer; maxContextTokens: number } | null {
    for (const served of this.spec.models) {
      if (served.name === model || served.loraAdapters?.includes(model)) {
        return {
          baseModel: served.name,
          tokenizer: this.options.tokenizers(served.tokenizer),
          maxContextTokens: served.maxContextTokens,
        }
      }
    }
    return null
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
    this.core.addPod(endpoint.name)
    const runtime: PodRuntime = { endpoint, ingestor: null, subscriber: null }
    this.pods.set(endpoint.name, runtime)
    // A new pod may start what is held.
    this.admission.release()
    if (endpoint.events === null && !this.options.sharedEvents) {
      // No KV events: the pod is routed on load alone (its index stays empty).
      this.core.setIndexReady(endpoint.name, false)
      return
    }
    const model = this.spec.models[0]?.name ?? ''
    const ingestor = new PodEventIngestor({
      pod: endpoint.name,
      model,
      index: this.options.index,
      replayEndpoint: endpoint.replay,
      onReady: (ready) => this.core.setIndexReady(endpoint.name, ready),
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
    this.core.removePod(name)
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
