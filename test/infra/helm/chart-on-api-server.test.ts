import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRedisSnapshotStore } from '../../../control-plane/config-store/redis-snapshot-store.ts'
import {
  chartSecrets,
  freePort,
  startRenderedContainer,
} from '../../support/chart-release-stack.ts'
import { eventually } from '../../support/controller/controller-fixture.ts'
import { e2eRun, startE2eCluster } from '../../support/e2e/e2e-stack.ts'
import type { KinfctlProcess } from '../../support/e2e/kinfctl-process.ts'
import { chartDir, type Manifest, parseManifests, templateChart } from '../../support/helm-chart.ts'
import { redisUrl } from '../../support/redis-test-namespaces.ts'

/**
 * The chart as an install would go: its CRDs, then its rendered manifests and the vLLM
 * example, applied with the pinned kubectl to the test API server; then the controller and
 * the scorer started as the kubelet would start the rendered containers (their args, env
 * from the downward API and from the Secrets on the server), against the real Redis under
 * a prefix of this run. The controller must get ready and publish; the scorer must follow.
 */
const run = e2eRun()
const processes: KinfctlProcess[] = []
const redis = new Redis(redisUrl, { lazyConnect: true })
let cluster: Awaited<ReturnType<typeof startE2eCluster>>
let manifests: Manifest[] = []
const ports = { controller: 0, scorer: 0, scorerMetrics: 0 }

async function startContainer(name: 'controller' | 'scorer', extraArgs: string[] = []) {
  const child = await startRenderedContainer(cluster, manifests, name, { extraArgs })
  processes.push(child)
  return child
}

const apply = async (file: string) => {
  const result = await cluster.kubectl('apply', '-f', file)
  expect(result.stderr, file).toBe('')
  expect(result.code).toBe(0)
  return result.stdout
}

beforeAll(async () => {
  ports.controller = await freePort()
  ports.scorer = await freePort()
  ports.scorerMetrics = await freePort()
  const rendered = await templateChart({
    set: {
      'controller.port': ports.controller,
      'scorer.port': ports.scorer,
      'scorer.metricsPort': ports.scorerMetrics,
      'controller.redisPrefix': run.prefix,
    },
  })
  expect(rendered.stderr).toBe('')
  manifests = parseManifests(rendered.stdout)
  writeFileSync(join(run.dir, 'release.yaml'), rendered.stdout)
  writeFileSync(
    join(run.dir, 'secrets.yaml'),
    chartSecrets(run)
      .map((s) => JSON.stringify(s))
      .join('\n---\n'),
  )
  cluster = await startE2eCluster(run)
}, 60_000)

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')))
  await redis.connect().catch(() => {})
  const keys = await redis.keys(`${run.prefix}*`)
  if (keys.length > 0) await redis.del(...keys)
  redis.disconnect()
  await cluster?.server.close()
})

describe('the chart on the test API server, with the controller and scorer it deploys', () => {
  it('applies: the CRDs, every rendered manifest and the vLLM example are stored', async () => {
    await apply(join(chartDir, 'crds'))
    await apply(join(run.dir, 'secrets.yaml'))
    const created = await apply(join(run.dir, 'release.yaml'))
    for (const m of manifests) expect(created).toContain(`/${m.metadata.name} created`)
    await apply(join(chartDir, 'examples/vllm-l40s.yaml'))
    const names = await cluster.kubectl(
      'get',
      'deployments,services,hpa,pdb,networkpolicies',
      '-n',
      'kinference',
      '-o',
      'name',
    )
    expect(names.stdout.split('\n').filter(Boolean).sort()).toEqual(
      [
        'deployment.apps/kinference-controller',
        'deployment.apps/kinference-scorer',
        'deployment.apps/vllm-qwen-27b',
        'horizontalpodautoscaler.autoscaling/kinference-scorer',
        'networkpolicy.networking.k8s.io/kinference-controller',
        'networkpolicy.networking.k8s.io/kinference-scorer',
        'networkpolicy.networking.k8s.io/kinference-vllm',
        'poddisruptionbudget.policy/kinference-controller',
        'poddisruptionbudget.policy/kinference-scorer',
        'poddisruptionbudget.policy/vllm-qwen-27b',
        'service/kinference-scorer',
        'service/vllm-qwen-27b',
      ].sort(),
    )
  }, 60_000)

  it('runs the controller from the rendered Deployment: ready, leading, publishing', async () => {
    // Outside a pod there is no service-account token: the test server's kubeconfig instead.
    const controller = await startContainer('controller', [
      '--kubeconfig',
      cluster.server.kubeconfigPath,
    ])
    await controller.waitFor(/running; probes and metrics on/, 30_000)
    const probe = (path: string) =>
      fetch(`http://127.0.0.1:${ports.controller}${path}`).then((r) => r.status)
    expect(await probe('/healthz')).toBe(200)
    await eventually(async () => (await probe('/readyz')) === 200, 30_000, '/readyz')
    const store = await createRedisSnapshotStore({ redis: redisUrl, prefix: run.prefix })
    try {
      const published = await eventually(
        async () => {
          const read = await store.current()
          return read?.ok ? read.published : null
        },
        30_000,
        'a published snapshot',
      )
      expect(Object.keys(published.snapshot.pools)).toContain('kinference/qwen-27b')
    } finally {
      await store.close()
    }
    const lease = await cluster.kubectl(
      'get',
      'lease',
      'kinference-controller',
      '-n',
      'kinference',
      '-o',
      'jsonpath={.spec.holderIdentity}',
    )
    expect(lease.stdout).toMatch(/^kinference-controller-0_\d+$/)
  }, 90_000)

  it('runs the scorer from the rendered Deployment: it follows that snapshot and answers /health on its metrics port', async () => {
    const scorer = await startContainer('scorer')
    await scorer.waitFor(/scorer listening on .*config from redis/, 30_000)
    const health = await fetch(`http://127.0.0.1:${ports.scorerMetrics}/health`)
    expect(health.status).toBe(200)
    expect((await fetch(`http://127.0.0.1:${ports.scorer}/health`)).status).toBe(404)
  }, 60_000)
})
