import type { Agent, ServerResponse } from 'node:http'
import type { Tracer } from '@opentelemetry/api'
import type { KvIndex } from '../../../shared/kv-index/kv-index.ts'
import type { TierHoldings } from '../../../shared/kv-index/tier-holdings.ts'
import type { Log } from '../../../shared/logging/log.ts'
import type { ReplayGuard } from '../http/replay-guard.ts'
import type { ScorerMetrics } from '../metrics/scorer-metrics.ts'
import type { PolicyBundleCache } from '../pools/policy-bundle-cache.ts'
import type { PoolRuntime } from '../pools/pool-runtime.ts'
import type { ScorerBackends, ScorerConfig } from '../scorer-config.ts'
import type { DecisionRecorder } from '../state/decision-recorder.ts'

/**
 * What a request's handler works with: the config, the pools and backends of the request's
 * start (a later config does not change them under it), the index, metrics, the pods' agent.
 */
export interface InferenceContext {
  /** The process's settings; its pools, pods and backends are only the ones it started with. */
  config: ScorerConfig
  pools: readonly PoolRuntime[]
  /** GatewayBackend name → pool id and model, for the edge's allowed-backends claim. */
  backends: ScorerBackends
  index: KvIndex
  /** The pods' non-GPU tiers, when they are kept (GET /admin/pods counts them). */
  tiers?: TierHoldings
  metrics: ScorerMetrics
  agent: Agent
  /** Pods seen reporting prompt_tokens_details: for them a missing cached_tokens means 0. */
  podsReportingCache: Set<string>
  random: () => number
  /** The scorer's log: lines about a request carry its request_id and a level. */
  log: Log
  /** Where the requests' spans go (route, tokenize, index_lookup, hold, pod); absent: off. */
  tracer?: Tracer | undefined
  /** Tenants' policies sent with status-dependent requests, parsed once each. */
  bundles: PolicyBundleCache
  /** This replica's name in the shared state, and its decision log writer. */
  replica: string
  decisions: Pick<DecisionRecorder, 'record'>
  /** The nonces of the signed requests accepted lately: a repeated one is a replay. */
  replays: ReplayGuard
  /**
   * The request ids of the responses in flight (request-trail.ts), for what is logged about
   * them outside their handlers (the server's error answer); absent: those lines carry none.
   */
  requestIds?: WeakMap<ServerResponse, string>
}

/** What every request shares: InferenceContext without the pools and backends of one. */
export type ScorerContext = Omit<InferenceContext, 'pools' | 'backends'>

/** What serving a prepared request on a pod takes: the pods' agent, metrics, the logs. */
export type PodContext = Pick<
  InferenceContext,
  | 'agent'
  | 'metrics'
  | 'log'
  | 'tracer'
  | 'requestIds'
  | 'podsReportingCache'
  | 'decisions'
  | 'replica'
>

/** What reading and checking the edge's signed request takes (http/signed-request.ts). */
export type SignedContext = Pick<InferenceContext, 'config' | 'replays'>

/** POST /v1/chat/completions and /v1/completions: the pools of the backends the edge allows. */
export type InferenceHandlerContext = SignedContext &
  PodContext &
  Pick<InferenceContext, 'pools' | 'backends'>

/** A route call: the tenant's policy (parsed once per bundle), the pools it may ask. */
export type RouteHandlerContext = SignedContext &
  PodContext &
  Pick<InferenceContext, 'pools' | 'bundles'>
