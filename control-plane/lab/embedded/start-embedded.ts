import { randomBytes } from 'node:crypto'
import type { Tracer } from '@opentelemetry/api'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import type { KinferenceResource } from '../../../shared/crd/resource.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { l40s27bFp8 } from '../../../shared/gpu/gpu-profile.ts'
import type { Log } from '../../../shared/logging/log.ts'
import type { QuotaStore } from '../../../shared/quota/quota-store.ts'
import { mintApiKey, parseApiKey, sha256HexOf } from '../../../shared/tenancy/api-key.ts'
import type { EdgeDeps } from '../../../workers/app/edge-deps.ts'
import { createRedisSnapshotStore } from '../../config-store/redis-snapshot-store.ts'
import { createEdgeDecisionRecorder } from '../../edge/edge-decision-recorder.ts'
import { createRedisResponseStore } from '../../edge/redis-response-store.ts'
import { type RunningEdge, startEdge } from '../../edge/start-edge.ts'
import type { RunningScorer } from '../../scorer/start-scorer.ts'
import { type FakeBedrock, startFakeBedrock } from '../bedrock-stand-in/start-fake-bedrock.ts'
import type { SimPod } from '../sim/sim-pod.ts'
import { closeAll } from './close-all.ts'
import { demoSnapshot } from './demo-snapshot.ts'
import { startSimulatedPools } from './start-simulated-pools.ts'

export interface EmbeddedOptions {
  port: number
  pods: number
  timeScale: number
  /** `kinf_<id>_<secret>`; a fresh one when absent. */
  demoKey?: string
  quotas: QuotaStore
  /** Reads the quota buckets back for x-ratelimit-remaining-* (Redis quotas: their reader). */
  quotaReader?: EdgeDeps['quotaReader']
  /**
   * When set: the index and the scorer's shared state in Redis, and the compiled snapshot
   * published there as the controller would (for `kinfctl inspect`).
   */
  redisUrl: string | null
  /** Their key prefix (default kinf:). */
  redisPrefix?: string
  /** The scorer's port (0 or absent: any free one), e.g. for a Worker under wrangler dev to reach. */
  scorerPort?: number
  /** The edge's /metrics listener, apart from its API port (0 or absent: a free one; null: off). */
  metricsPort?: number | null
  /** The scorer's /metrics and /health listener (0 or absent: a free one; null: off). */
  scorerMetricsPort?: number | null
  /** The edge-scorer HMAC secret; a fresh one when absent. */
  signingSecret?: string
  /** The scorer's admin token (its /admin and /ui status page); a fresh one when absent. */
  adminToken?: string
  log: Log
  /** Changes the demo resources before they are compiled (tests: tighter SLOs, quotas). */
  patch?: (resource: KinferenceResource) => void
  /** Replaces the PII detectors (tests of failing detectors). */
  detectPii?: EdgeDeps['detectPii']
  /** Where the edge's and the scorer's spans go (docs/tracing.md); none when absent. */
  tracers?: { edge?: Tracer | undefined; scorer?: Tracer | undefined }
}

export interface EmbeddedStack {
  edge: RunningEdge
  scorer: RunningScorer
  /** Every pool's pods. */
  pods: SimPod[]
  bedrock: FakeBedrock
  snapshot: ConfigSnapshot
  demoKey: string
  signingSecret: string
  adminToken: string
  /** The status page, its admin token in the address (open it in a browser). */
  statusPageUrl: string
  close(): Promise<void>
}

/**
 * The embedded default on one machine: simulated vLLM pods, the scorer in front of them,
 * a local Bedrock-compatible server for bursting, and the edge on Node, all configured
 * from infra/k8s/demo/embedded.yaml with the demo key's hash and the local endpoint filled in.
 */
export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedStack> {
  const demoKey = options.demoKey ?? mintApiKey((n) => randomBytes(n), { id: 'demo' }).key
  const parsedKey = parseApiKey(demoKey)
  if (parsedKey === null)
    throw new KinfError('invalid_config', 'KINFERENCE_DEMO_KEY must look like kinf_<id>_<secret>')
  const bedrock = await startFakeBedrock({ port: 0 })
  const started: { close(): Promise<void> }[] = [bedrock]
  try {
    const snapshot = await demoSnapshot(
      bedrock.url,
      parsedKey.id,
      await sha256HexOf(parsedKey.secret),
      options.patch,
    )
    if (options.redisUrl) await publishSnapshot(options.redisUrl, options.redisPrefix, snapshot)
    const signingSecret = options.signingSecret ?? randomBytes(24).toString('base64url')
    const adminToken = options.adminToken ?? randomBytes(18).toString('base64url')
    const simulated = await startSimulatedPools({
      pools: snapshot,
      podsPerPool: options.pods,
      sim: {
        profile: l40s27bFp8,
        timeScale: options.timeScale,
        seed: 42,
        eventEncoding: 'map',
        namePrefix: (pool) => pool,
      },
      scorer: {
        // Absent: startSimulatedPools' default, a free port.
        port: options.scorerPort,
        metricsPort: options.scorerMetricsPort,
        signingSecrets: [signingSecret],
        adminToken,
        redisUrl: options.redisUrl,
        ...(options.redisPrefix === undefined ? {} : { redisPrefix: options.redisPrefix }),
        ...(options.tracers?.scorer && { tracer: options.tracers.scorer }),
      },
      log: options.log,
    })
    started.push(simulated)
    const { scorer } = simulated
    // With Redis, /v1/responses keeps its conversations there, as the edge's replicas would.
    const responses = options.redisUrl
      ? await createRedisResponseStore({
          redis: options.redisUrl,
          ...(options.redisPrefix === undefined ? {} : { prefix: options.redisPrefix }),
        })
      : null
    if (responses) started.push(responses)
    // With Redis, what the edge decides alone joins the scorer's decision log there.
    const decisions = options.redisUrl
      ? createEdgeDecisionRecorder({ store: scorer.state, log: options.log })
      : null
    if (decisions) started.push(decisions)
    const edge = await startEdge({
      port: options.port,
      metricsPort: options.metricsPort,
      config: async () => snapshot,
      scorerUrls: [scorer.url],
      signingSecret,
      quotas: options.quotas,
      ...(options.quotaReader && { quotaReader: options.quotaReader }),
      // The local stand-in accepts any well-formed signature.
      awsCredentials: { accessKeyId: 'AKIAEMBEDDEDDEMO0000', secretAccessKey: 'embedded-demo' },
      log: options.log,
      ...(options.detectPii ? { detectPii: options.detectPii } : {}),
      ...(responses && { responses }),
      ...(decisions && { decisions }),
      ...(options.tracers?.edge && { tracer: options.tracers.edge }),
    })
    started.push(edge)
    return {
      edge,
      scorer,
      pods: simulated.pods,
      bedrock,
      snapshot,
      demoKey,
      signingSecret,
      adminToken,
      statusPageUrl: `${scorer.url}/ui?token=${encodeURIComponent(adminToken)}`,
      close: () => closeAll(started),
    }
  } catch (error) {
    await closeAll(started)
    throw error
  }
}

/** The embedded default's config, published as the controller publishes a cluster's. */
async function publishSnapshot(
  redisUrl: string,
  prefix: string | undefined,
  snapshot: ConfigSnapshot,
): Promise<void> {
  const store = await createRedisSnapshotStore({
    redis: redisUrl,
    ...(prefix === undefined ? {} : { prefix }),
  })
  try {
    await store.publish(snapshot, Date.now())
  } finally {
    await store.close()
  }
}
