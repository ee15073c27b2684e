import type { InferencePoolSpec } from '../crd/inference-pool.ts'
import { gpuProfiles, kvBytesPerToken, numGpuBlocks } from '../gpu/gpu-profile.ts'
import { createStepCostModel } from '../gpu/step-cost-model.ts'
import type { KvIndex } from '../kv-index/kv-index.ts'
import type { TierLookup } from '../kv-index/tier-lookup.ts'
import type { AdmissionQueueOptions } from './admission-queue.ts'
import type { RoutedPodSettings } from './routed-pod.ts'
import type { RoutingStrategy, StepCost, TtftModel } from './routing-strategy.ts'
import { KinferenceParameters } from './strategies/create-kinference-strategy.ts'
import { createRoutingStrategy } from './strategies/create-routing-strategy.ts'
import type { StrategyRegistry } from './strategies/define-strategy.ts'
import type { HostLink } from './ttft-model.ts'

export interface PoolRouterOptions {
  name: string
  spec: InferencePoolSpec
  /** The KV index (shared with other pools and scorer replicas). */
  index: KvIndex
  /**
   * The pods' other tiers (CPU offload), looked up after the index when some pod has one;
   * absent: GPU hits only.
   */
  tiers?: TierLookup
  /** Tie-breaks and exploration: Math.random in the scorer, seeded in simulations. */
  random: () => number
  /**
   * The index's clock, for speculative entries' expiry and lookups: wall time in the scorer
   * (replicas share the index), virtual time in simulations.
   */
  indexNowMs: () => number
  /** A speculative entry could not be written (the request goes on without it). */
  onError: (message: string) => void
  /** Where the spec's routing strategy is found: the built-ins unless given. */
  strategies?: StrategyRegistry
  /** What the router runs with: what the spec says (routerSettings) unless given. */
  settings?: RouterSettings
}

/**
 * What a pool's router runs with: its strategy, its TTFT model's start and fit, how its
 * pods are judged, its late binding.
 */
export interface RouterSettings extends RoutedPodSettings {
  strategy: RoutingStrategy
  /** The pods' per-step token budget (max_num_batched_tokens). */
  stepBudget: number
  /** The pool's TTFT model before any answer (from the GPU profile or the pool's overrides). */
  prior: TtftModel
  onlineCalibration: boolean
  forgettingFactor: number
  admission: AdmissionQueueOptions
  /**
   * How long a routed request's blocks count as cached on its pod before events confirm them;
   * null: no speculative entries (a strategy that declares speculativeEntries false).
   */
  speculativeTtlMs: number | null
  /** Output tokens planned for a request that sets no limit (see KinferenceParameters). */
  expectedOutputTokens: number
  /** How a load from the pods' CPU tier is priced (hostLinkOf); null: the KV size is unknown. */
  hostLink: HostLink | null
}

/**
 * The kinference parameters of a pool, defaults applied by their schema: the block is
 * optional in the CRD (and only allowed with the kinference strategy), but late binding,
 * the speculative entries' TTL (for a strategy that has them) and the TTFT fit read it
 * whatever the strategy.
 */
export function kinferenceParametersOf(spec: InferencePoolSpec): KinferenceParameters {
  return spec.routing.kinference ?? KinferenceParameters.parse({})
}

/** A generic GPU for pools whose profile this build does not know. */
const unknownGpuTtft: TtftModel = { overheadMs: 50, msPerToken: 0.15 }
const unknownGpuStep: StepCost = { decodeStepMs: 30, msPerContextToken: 2e-4 }

/**
 * The TTFT model a new pod starts from: the pool's overrides, else its GPU profile's cost
 * model (a full prefill step per budget of tokens; a decode step of overhead).
 */
export function ttftPrior(spec: InferencePoolSpec): TtftModel {
  const budget = spec.scheduler.maxNumBatchedTokens
  const profile = gpuProfiles[spec.gpuProfile]
  let prior = unknownGpuTtft
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
  const overrides = kinferenceParametersOf(spec)
  if (overrides.prefillTokensPerSecond)
    prior = { ...prior, msPerToken: 1000 / overrides.prefillTokensPerSecond }
  if (overrides.overheadMs !== undefined) prior = { ...prior, overheadMs: overrides.overheadMs }
  return prior
}

/** What a pod's decode step costs, from the pool's GPU profile (a generic GPU without one). */
export function stepCostOf(spec: InferencePoolSpec): StepCost {
  const profile = gpuProfiles[spec.gpuProfile]
  if (!profile) return unknownGpuStep
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

/**
 * The pods' host link: the KV bytes of a token from the pool's GPU profile, the link's
 * bandwidth from routing.kinference.hostLinkBytesPerSecond; null for a profile this build
 * does not know (a CPU-tier hit is then never valued above recomputing).
 */
export function hostLinkOf(spec: InferencePoolSpec): HostLink | null {
  const profile = gpuProfiles[spec.gpuProfile]
  if (!profile) return null
  const bytesPerSecond = kinferenceParametersOf(spec).hostLinkBytesPerSecond
  return { kvBytesPerToken: kvBytesPerToken(profile), bytesPerSecond }
}

/** How long a pod that failed a request is left out. */
const unhealthyCooldownMs = 5_000

/**
 * kinference's speculative TTL on a pod whose feed is held lossy, a new pod's and one whose
 * answers show its KV events late or lost (RoutedPod.speculativeTtlMs, FeedLossTracker):
 * long enough that a prefix's next requests refresh the entries before they lapse, so a
 * lost batch of events does not leave a hole in the prefix's chain. The peers keep their
 * deployed behaviour.
 */
const lossySpeculativeTtlMs = 30_000

/**
 * What the pool's spec says its router runs with: its strategy (from `strategies`, the
 * built-ins unless a caller registers more), TTFT prior, memory and step cost.
 */
export function routerSettings(
  spec: InferencePoolSpec,
  strategies?: StrategyRegistry,
): RouterSettings {
  const kinference = kinferenceParametersOf(spec)
  const prior = ttftPrior(spec)
  const hostLink = hostLinkOf(spec)
  const strategy = createRoutingStrategy(
    spec.routing.strategy,
    spec.routing,
    {
      stepBudget: spec.scheduler.maxNumBatchedTokens,
      peakPrefillTokensPerSecond: 1000 / prior.msPerToken,
      kvBytesPerToken: hostLink?.kvBytesPerToken ?? null,
    },
    strategies,
  )
  return {
    strategy,
    stepBudget: spec.scheduler.maxNumBatchedTokens,
    prior,
    onlineCalibration: kinference.onlineCalibration,
    forgettingFactor: kinference.forgettingFactor,
    driftTolerance: kinference.driftTolerance,
    metricsStalenessMs: spec.metrics.stalenessMs,
    unhealthyCooldownMs,
    kvCapacityTokens: kvCapacityOf(spec),
    stepCost: stepCostOf(spec),
    admission: admissionQueueOptions(spec),
    speculativeTtlMs: strategy.speculativeEntries === false ? null : kinference.speculativeTtlMs,
    lossySpeculativeTtlMs: spec.routing.strategy === 'kinference' ? lossySpeculativeTtlMs : null,
    expectedOutputTokens: kinference.expectedOutputTokens,
    hostLink,
  }
}

/** Late binding on for this pool: the kinference strategy with routing.kinference.lateBinding. */
export function lateBindingEnabled(spec: InferencePoolSpec): boolean {
  return spec.routing.strategy === 'kinference' && kinferenceParametersOf(spec).lateBinding
}

/** Bounds of the admission queue: past them, requests go straight to their best pod. */
const maxHeld = 10_000
const scanLimit = 16

/** The admission queue of a pool. */
export function admissionQueueOptions(spec: InferencePoolSpec): AdmissionQueueOptions {
  return {
    enabled: lateBindingEnabled(spec),
    maxHoldMs: kinferenceParametersOf(spec).maxHoldMs,
    maxHeld,
    scanLimit,
    stepBudget: spec.scheduler.maxNumBatchedTokens,
  }
}
