import type { Agent } from 'node:http'
import type { KvIndex } from '../../shared/kv-index/kv-index.ts'
import type { PolicyBundleCache } from './policy-bundle-cache.ts'
import type { PoolRuntime } from './pool-runtime.ts'
import type { ScorerConfig } from './scorer-config.ts'
import type { ScorerMetrics } from './scorer-metrics.ts'

/** What the scorer's request handlers share: config, pools, index, metrics, the pods' agent. */
export interface InferenceContext {
  config: ScorerConfig
  pools: readonly PoolRuntime[]
  index: KvIndex
  metrics: ScorerMetrics
  agent: Agent
  /** Pods seen reporting prompt_tokens_details: for them a missing cached_tokens means 0. */
  podsReportingCache: Set<string>
  random: () => number
  log: (message: string) => void
  /** Tenants' policies sent with status-dependent requests, parsed once each. */
  bundles: PolicyBundleCache
}
