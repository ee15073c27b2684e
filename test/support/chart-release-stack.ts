import { createServer } from 'node:net'
import type { Redis } from 'ioredis'
import type { E2eRun, startE2eCluster } from './e2e/e2e-stack.ts'
import { type KinfctlProcess, startKinfctl } from './e2e/kinfctl-process.ts'
import { containersOf, expandArgs, findManifest, type Manifest } from './helm-chart.ts'
import type { Container } from './manifest-types.ts'
import { redisUrl } from './redis-test-namespaces.ts'

/**
 * The chart's rendered workloads run as the kubelet would run them, against the test API
 * server (test/infra/helm/chart-on-api-server.test.ts and its siblings): each container's
 * env built from its values, the downward API and the Secrets stored on the server, its
 * args expanded with it, and kinfctl started with them on this machine.
 */
export type ChartCluster = Awaited<ReturnType<typeof startE2eCluster>>

/** The release namespace the tests render and apply the chart in. */
export const chartNamespace = 'kinference'

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
    server.once('error', reject)
  })
}

/** The Secrets the chart's values name by default, holding this run's values. */
export function chartSecrets(run: E2eRun): object[] {
  return [
    { name: 'kinference-redis', data: { url: redisUrl } },
    { name: 'kinference-edge-signing', data: { secrets: run.signingSecret } },
    { name: 'kinference-admin-token', data: { token: run.adminToken } },
  ].map(({ name, data }) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: chartNamespace },
    stringData: data,
  }))
}

/** The container's environment as the kubelet builds it, Secrets read from the server. */
export async function containerEnv(
  cluster: ChartCluster,
  container: Container,
  podName: string,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {}
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom
    if (variable.value !== undefined) env[variable.name] = variable.value
    else if (from?.fieldRef?.fieldPath === 'metadata.name') env[variable.name] = podName
    else if (from?.fieldRef?.fieldPath === 'metadata.namespace') env[variable.name] = chartNamespace
    else if (from?.secretKeyRef) {
      const { name, key } = from.secretKeyRef
      const read = await cluster.kubectl(
        'get',
        'secret',
        name,
        '-n',
        chartNamespace,
        '-o',
        `jsonpath={.data.${key.replaceAll('.', '\\.')}}`,
      )
      if (read.code !== 0) throw new Error(`${variable.name} from Secret ${name}: ${read.stderr}`)
      env[variable.name] = Buffer.from(read.stdout, 'base64').toString('utf8')
    }
  }
  return env
}

/** The first container of the release's Deployment `name` (kinference-<name>). */
export function renderedContainer(manifests: Manifest[], name: string): Container {
  const [container] = containersOf(findManifest(manifests, 'Deployment', `kinference-${name}`))
  if (!container) throw new Error(`no ${name} container`)
  return container
}

/**
 * Starts the rendered `kinfctl <name>` container: its args as the kubelet expands them,
 * each passed through `rewrite` (an in-cluster address to this machine's, say), then
 * `extraArgs`.
 */
export async function startRenderedContainer(
  cluster: ChartCluster,
  manifests: Manifest[],
  name: string,
  options: { extraArgs?: string[]; rewrite?: (arg: string) => string } = {},
): Promise<KinfctlProcess> {
  const container = renderedContainer(manifests, name)
  const env = await containerEnv(cluster, container, `kinference-${name}-0`)
  const args = expandArgs(container.args ?? [], env).map(options.rewrite ?? ((arg) => arg))
  return startKinfctl(name, [...args, ...(options.extraArgs ?? [])], env)
}

/**
 * After a chart test: the started containers killed, the run's Redis keys (and its pods'
 * KV-event keys) deleted, the test API server closed.
 */
export async function stopChartRelease(stack: {
  processes: readonly KinfctlProcess[]
  redis: Redis
  run: E2eRun
  cluster: ChartCluster | undefined
}): Promise<void> {
  const { processes, redis, run, cluster } = stack
  await Promise.all(processes.map((p) => p.stop('SIGKILL')))
  await redis.connect().catch(() => {})
  const keys = await redis.keys(`${run.prefix}*`)
  if (keys.length > 0) await redis.del(...keys)
  await redis.del(...run.pods.map((pod) => `kinf:e:${pod.name}`))
  redis.disconnect()
  await cluster?.server.close()
}
