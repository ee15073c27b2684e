import { createHash } from 'node:crypto'
import { startSimFleet } from '../../control-plane/lab/sim/sim-fleet.ts'
import { loadSimModelAssets } from '../../control-plane/lab/sim/sim-model-assets.ts'
import type { SimPod } from '../../control-plane/lab/sim/sim-pod.ts'
import { ScorerConfig } from '../../control-plane/scorer/scorer-config.ts'
import { startScorer } from '../../control-plane/scorer/start-scorer.ts'
import { canonicalJson } from '../../shared/config/canonical-json.ts'
import { compileSnapshot } from '../../shared/config/compile-snapshot.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { PoolEndpoint } from '../../shared/config/pool-endpoint.ts'
import type { InferencePoolSpec } from '../../shared/crd/inference-pool.ts'
import { KinferenceResource } from '../../shared/crd/resource.ts'
import { l40s27bFp8 } from '../../shared/gpu/gpu-profile.ts'
import { adminToken, model, poolSpec, type Stack, secret } from './scorer-stack.ts'

export const namespace = 'test'
let assets: ReturnType<typeof loadSimModelAssets> | undefined

/** One pool of a test snapshot: its spec, its endpoints, and a backend `<name>-local` on it. */
export interface TestPool {
  name: string
  spec?: InferencePoolSpec
  pods: readonly SimPod[]
}

/** A snapshot of `pools` with the pods as their endpoints, hashed as the controller does. */
export async function snapshotOf(pools: readonly TestPool[]): Promise<ConfigSnapshot> {
  const meta = (name: string) => ({ name, namespace })
  const documents = pools.flatMap((pool) => [
    { kind: 'InferencePool', metadata: meta(pool.name), spec: pool.spec ?? poolSpec() },
    {
      kind: 'GatewayBackend',
      metadata: meta(`${pool.name}-local`),
      spec: { target: { pool: { name: pool.name, model } } },
    },
  ])
  const resources = documents.map((document) =>
    KinferenceResource.parse({ apiVersion: 'kinference.dev/v1alpha1', ...document }),
  )
  const compiled = await compileSnapshot(resources, namespace)
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues))
  const { hash: _compiled, ...content } = compiled.snapshot
  content.endpoints = Object.fromEntries(
    pools.map((pool) => [`${namespace}/${pool.name}`, pool.pods.map(endpointOf)]),
  )
  const hash = createHash('sha256').update(canonicalJson(content)).digest('hex')
  return { ...content, hash: `sha256:${hash}` }
}

function endpointOf(pod: SimPod): PoolEndpoint {
  return {
    name: pod.config.podName,
    namespace,
    address: '127.0.0.1',
    workerSet: null,
    http: pod.url,
    metrics: `${pod.url}/metrics`,
    events: pod.kvEventsEndpoint,
    replay: pod.replayEndpoint,
    labels: {},
  }
}

/** `count` simulated pods (time scale 50), sim-pod-0… */
export async function startPods(count: number): Promise<SimPod[]> {
  assets ??= loadSimModelAssets()
  return startSimFleet({
    pods: count,
    profile: l40s27bFp8,
    modelName: model,
    port: 0,
    zmqPort: 0,
    timeScale: 50,
    seed: 11,
    eventEncoding: 'map',
    assets,
  })
}

/** A scorer started from `snapshot` in front of `pods` (they are closed with it). */
export async function startFromSnapshot(
  pods: SimPod[],
  snapshot: ConfigSnapshot,
  options: { redisUrl?: string; redisPrefix?: string; drainTimeoutMs?: number } = {},
): Promise<Stack> {
  const scorer = await startScorer(
    ScorerConfig.parse({
      port: 0,
      signingSecrets: [secret],
      adminToken,
      snapshot,
      redisUrl: options.redisUrl ?? null,
      redisPrefix: options.redisPrefix,
      drainTimeoutMs: options.drainTimeoutMs,
    }),
    (message) => {
      if (process.env.KINFERENCE_TEST_LOG) console.log(message)
    },
  )
  return {
    pods,
    scorer,
    async close() {
      await scorer.close()
      await Promise.all(pods.map((pod) => pod.close()))
    },
  }
}
