import type { Context } from 'hono'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { Log } from '../../shared/logging/log.ts'
import type { Plugins } from '../../shared/plugins.ts'
import type { QuotaStore } from '../../shared/quota/quota-store.ts'
import { createCacheSalter } from '../../shared/tenancy/cache-salt.ts'
import type { EdgeDeps } from './edge-deps.ts'
import { createEdgeMetrics, type EdgeMetrics } from './edge-metrics.ts'
import { type AwsCredentials, createExternalProviders } from './external-providers.ts'
import { createScorerClient } from './scorer-client.ts'

/**
 * What a runtime hands the edge: where the config snapshot and the quota ledger live, how
 * the scorer is reached and signed to, the AWS keys, and its own fetch, clock, timers, ids,
 * log and client address. The Worker (workers/worker/index.ts) and Node
 * (control-plane/edge/start-edge.ts) each fill it in; the rest of the wiring is here, once.
 */
export interface EdgeRuntime {
  /** The verified snapshot, read with the schema of `plugins` (see createKvSnapshotLoader). */
  config: () => Promise<ConfigSnapshot>
  /** The strategies and conditions its snapshots are read with; the built-in ones when absent. */
  plugins?: Plugins
  quotas: QuotaStore
  /** One scorer URL, or several replicas' (see createScorerClient). */
  scorerUrls: readonly string[]
  /** HMAC secret shared with the scorer; also keys the Isolated tenants' cache_salt. */
  signingSecret: string
  /** Explicit AWS keys; the SDK's default chain (IRSA, environment) when absent. */
  awsCredentials: AwsCredentials | undefined
  fetch: typeof fetch
  nowMs: () => number
  sleep: (ms: number) => Promise<void>
  newRequestId: () => string
  log: Log
  /** The client's address as the runtime knows it (see EdgeDeps.clientAddress). */
  clientAddress: (c: Context) => string | null
  /** The runtime's own, when it serves them elsewhere (Node's /metrics listener). */
  metrics?: EdgeMetrics
  limits?: EdgeDeps['limits']
  detectPii?: EdgeDeps['detectPii']
}

/** The edge app's ports on a runtime: the scorer client, Bedrock, the cache salt and metrics. */
export function createEdgeDeps(runtime: EdgeRuntime): EdgeDeps {
  const { awsCredentials, limits, detectPii, plugins } = runtime
  return {
    config: runtime.config,
    quotas: runtime.quotas,
    scorer: createScorerClient({
      urls: runtime.scorerUrls,
      signingSecret: runtime.signingSecret,
      nowSeconds: () => runtime.nowMs() / 1000,
      fetch: runtime.fetch,
    }),
    external: createExternalProviders({ credentials: () => awsCredentials }),
    cacheSalter: createCacheSalter(runtime.signingSecret),
    metrics: runtime.metrics ?? createEdgeMetrics(),
    nowMs: runtime.nowMs,
    sleep: runtime.sleep,
    newRequestId: runtime.newRequestId,
    log: runtime.log,
    clientAddress: runtime.clientAddress,
    ...(plugins ? { plugins } : {}),
    ...(limits ? { limits } : {}),
    ...(detectPii ? { detectPii } : {}),
  }
}
