import { afterEach, describe, expect, it } from 'vitest'
import {
  BenchCluster,
  benchNamespace,
  changeKinds,
} from '../../../../../control-plane/lab/component-bench/controller/bench-cluster.ts'
import { planChanges } from '../../../../../control-plane/lab/component-bench/controller/run-changes.ts'
import { summarizeLatencies } from '../../../../../control-plane/lab/component-bench/controller/summarize-latencies.ts'
import type { ConfigSnapshot } from '../../../../../shared/config/config-snapshot.ts'
import { createSeededRandom } from '../../../../../shared/random/create-seeded-random.ts'
import {
  eventually,
  type InProcessController,
  startInProcessController,
} from '../../../../support/controller/controller-fixture.ts'
import {
  type KubeApiServer,
  startKubeApiServer,
} from '../../../../support/kube-api-server/start-kube-api-server.ts'
import { redisUrl, useRedisTestNamespaces } from '../../../../support/redis-test-namespaces.ts'

const { uniquePrefix } = useRedisTestNamespaces()

describe('the controller benchmark', () => {
  let server: KubeApiServer | undefined
  let controller: InProcessController | undefined
  afterEach(async () => {
    await controller?.close()
    await server?.close()
  })

  it('builds a cluster the controller accepts whole, and each change shows in the next snapshot', async () => {
    server = await startKubeApiServer({ namespaces: [benchNamespace], crds: ['infra/k8s/crds'] })
    const cluster = new BenchCluster(server, { pools: 4, podsPerPool: 3, policies: 5 })
    cluster.seed()
    controller = await startInProcessController(server, { url: redisUrl, prefix: uniquePrefix() })
    const store = controller.store
    const live = async () => {
      const read = await store.current()
      return read?.ok ? read.published.snapshot : undefined
    }
    const first = await eventually(live, 10_000, 'the first snapshot')
    const endpoints = Object.values(first.endpoints).reduce((sum, list) => sum + list.length, 0)
    expect({
      pools: Object.keys(first.pools).length,
      policies: Object.keys(first.policies).length,
      endpoints,
    }).toEqual(cluster.expected())
    const random = createSeededRandom(7)
    let previous: ConfigSnapshot = first
    for (const kind of changeKinds) {
      const change = cluster.change(kind, random)
      expect(change.carries(previous), `${kind} before it is published`).toBe(false)
      previous = await eventually(
        async () => {
          const snapshot = await live()
          return snapshot !== undefined && change.carries(snapshot) ? snapshot : undefined
        },
        10_000,
        `${kind} ${change.target} in the snapshot`,
      )
    }
  })

  it('plans the same changes for the same seed, each kind equally often', () => {
    const plan = planChanges(5, createSeededRandom(3))
    expect(plan).toEqual(planChanges(5, createSeededRandom(3)))
    expect(plan).not.toEqual(planChanges(5, createSeededRandom(4)))
    for (const kind of changeKinds) expect(plan.filter((k) => k === kind)).toHaveLength(5)
  })

  it('takes nearest-rank percentiles, so p99 of 50 samples is the largest', () => {
    const values = Array.from({ length: 50 }, (_, i) => i + 1)
    expect(summarizeLatencies(values)).toMatchObject({ p50Ms: 25, p99Ms: 50, maxMs: 50 })
    expect(summarizeLatencies([])).toMatchObject({ count: 0, p50Ms: 0 })
  })
})
