import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import type { CloudflareKvPublisher } from '../../../control-plane/config-store/cloudflare-kv-publisher.ts'
import {
  createRedisSnapshotStore,
  type RedisSnapshotStore,
} from '../../../control-plane/config-store/redis-snapshot-store.ts'
import { createControllerMetrics } from '../../../control-plane/controller/controller-metrics.ts'
import { loadKubeConfig } from '../../../control-plane/controller/load-kube-config.ts'
import { createSnapshotSink } from '../../../control-plane/controller/snapshot-sink.ts'
import {
  type ControllerOptionsInput,
  type RunningController,
  startController,
} from '../../../control-plane/controller/start-controller.ts'
import {
  type KubeApiServer,
  type KubeObject,
  startKubeApiServer,
} from '../kube-api-server/start-kube-api-server.ts'

export const kinference = 'kinference.dev/v1alpha1'

/** The objects of a YAML file of the repository, as JSON. */
export function yamlObjects(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).flatMap((doc) => {
    const value = doc.toJS() as KubeObject | null
    return value ? [value] : []
  })
}

export const pluralOf: Record<string, string> = {
  InferencePool: 'inferencepools',
  InferenceWorkerSet: 'inferenceworkersets',
  InferenceProvider: 'inferenceproviders',
  GatewayBackend: 'gatewaybackends',
  InferencePolicy: 'inferencepolicies',
}

/** The Gateway API Inference Extension's InferencePool CRD (inference.networking.k8s.io/v1). */
export const upstreamPoolCrd = join(
  'test',
  'support',
  'kube-api-server',
  'crds',
  'inference.networking.k8s.io_inferencepools.yaml',
)

/** Kinference's CRDs, and the upstream InferencePool's when `upstreamPools` is set. */
export async function startTestCluster(
  namespaces = ['default', 'kinference'],
  options: { upstreamPools?: boolean } = {},
): Promise<KubeApiServer> {
  return startKubeApiServer({
    namespaces,
    crds: [join('infra', 'k8s', 'crds'), ...(options.upstreamPools ? [upstreamPoolCrd] : [])],
    bookmarkIntervalMs: 200,
  })
}

/** Creates (or replaces) the Kinference objects of a file through the server's store. */
export function applyObjects(server: KubeApiServer, objects: readonly KubeObject[]) {
  for (const object of objects) {
    const plural = pluralOf[object.kind as string]
    if (plural) putObject(server, kinference, plural, object)
  }
}

/** Creates `object`, or replaces the one of its name at its current resourceVersion. */
export function putObject(
  server: KubeApiServer,
  apiVersion: string,
  plural: string,
  object: KubeObject,
) {
  const { namespace, name } = object.metadata as { namespace: string; name: string }
  const existing = server.objects.get(apiVersion, plural, namespace, name)
  if (existing) {
    const metadata = {
      ...(object.metadata as object),
      resourceVersion: (existing.metadata as { resourceVersion: string }).resourceVersion,
    }
    server.objects.update(apiVersion, plural, { ...object, metadata })
  } else server.objects.create(apiVersion, plural, object)
}

/** A pod with an IP and the EndpointSlice entry for it. */
export function podObject(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  ip: string,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai' }] },
    status: { phase: 'Running', podIP: ip },
  }
}

export function sliceObject(
  name: string,
  namespace: string,
  pods: readonly { name: string; ip: string; ready?: boolean }[],
): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace,
      labels: { 'kubernetes.io/service-name': name.replace(/-[a-z0-9]+$/, '') },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8000, protocol: 'TCP' }],
    endpoints: pods.map((pod) => ({
      addresses: [pod.ip],
      conditions: { ready: pod.ready ?? true, serving: pod.ready ?? true, terminating: false },
      targetRef: { kind: 'Pod', name: pod.name, namespace },
    })),
  }
}

export interface InProcessController {
  controller: RunningController
  store: RedisSnapshotStore
  logs: string[]
  close(): Promise<void>
}

/** The controller in this process against `server`, publishing to Redis under `prefix`. */
export async function startInProcessController(
  server: KubeApiServer,
  redis: { url: string; prefix: string },
  options: Partial<ControllerOptionsInput> = {},
  cloudflare: CloudflareKvPublisher | null = null,
): Promise<InProcessController> {
  const store = await createRedisSnapshotStore({ redis: redis.url, prefix: redis.prefix })
  const metrics = createControllerMetrics(() => Date.now() / 1000)
  const logs: string[] = []
  const controller = await startController(
    loadKubeConfig({ kubeconfig: server.kubeconfigPath, inCluster: false }),
    createSnapshotSink({ store, cloudflare, metrics, nowMs: Date.now }),
    {
      identity: `test-${Math.random().toString(36).slice(2, 8)}`,
      lease: {
        namespace: 'kinference',
        durationMs: 3_000,
        renewDeadlineMs: 2_000,
        retryPeriodMs: 200,
      },
      debounceMs: 20,
      maxDebounceMs: 200,
      host: '127.0.0.1',
      port: 0,
      publishRetryMs: 100,
      publishRetryMaxMs: 1_000,
      ...options,
    },
    (line) => logs.push(line),
    metrics,
  )
  return {
    controller,
    store,
    logs,
    async close() {
      await controller.close()
      await store.close()
    },
  }
}

/** What the store holds live, when it holds a snapshot it can read. */
export async function publishedOf(store: RedisSnapshotStore) {
  const read = await store.current()
  return read?.ok ? read.published : undefined
}

/** Polls until `check` returns a value (not undefined/false), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined && value !== null && value !== false) return value as NonNullable<T>
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

export function conditionOf(
  object: KubeObject | undefined,
  type: string,
): Record<string, unknown> | undefined {
  const conditions = (object?.status as { conditions?: Record<string, unknown>[] } | undefined)
    ?.conditions
  return conditions?.find((condition) => condition.type === type)
}
