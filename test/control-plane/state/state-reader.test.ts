import { describe, expect, it } from 'vitest'
import { createRedisStateStore } from '../../../control-plane/state/redis-state-store.ts'
import { createStateReader } from '../../../control-plane/state/state-reader.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { decided, ended, podView } from '../../support/state-store-conformance.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()
const t0 = 1_800_000_000_000

async function reader(nowMs: () => number) {
  const state = await createRedisStateStore({ redis, prefix: uniquePrefix() })
  const none = { current: async () => null, read: async () => null }
  return {
    state,
    reader: createStateReader({
      state,
      snapshots: none,
      quotas: { buckets: async () => [] },
      nowMs,
    }),
  }
}

describe('the state reader over Redis', () => {
  it('merges the live replicas of a pod, and forgets a replica whose view expired', async () => {
    let now = t0
    const { state, reader: read } = await reader(() => now)
    await state.writePodViews(
      { replica: 'a', writtenAtMs: t0, pods: [podView('pod-0', { inFlight: 2 })], pools: [] },
      5_000,
    )
    await state.writePodViews(
      {
        replica: 'b',
        writtenAtMs: t0 + 3_000,
        pods: [podView('pod-0', { inFlight: 3 }), podView('pod-1', { pool: 'ns/other' })],
        pools: [],
      },
      5_000,
    )
    now = t0 + 4_000
    const [pod0] = await read.pods({ pool: 'sim-27b' })
    expect(pod0).toMatchObject({ pod: 'pod-0', inFlight: 5 })
    expect(pod0?.replicas.sort()).toEqual(['a', 'b'])
    now = t0 + 6_000
    const later = await read.pods()
    expect(later.map((p) => [p.pod, p.replicas])).toEqual([
      ['pod-0', ['b']],
      ['pod-1', ['b']],
    ])
  })

  it('filters decisions by tenant and pool, and says where to follow from', async () => {
    const { state, reader: read } = await reader(Date.now)
    await state.appendDecisions([
      decided('a', t0),
      decided('b', t0, { tenant: 'other' }),
      decided('c', t0, { pool: 'ns/elsewhere' }),
      ended('a', t0),
    ])
    const report = await read.decisions({ tenant: 'demo', pool: 'sim-27b' })
    expect(report.decisions.map((d) => [d.requestId, d.end?.outcome])).toEqual([['a', 'completed']])
    expect(report.summary.decisions).toBe(1)
    const all = await read.entries({})
    expect(report.lastId).toBe(all.lastId)
    expect((await read.entries({ afterId: all.lastId as string })).entries).toEqual([])
  })

  it('refuses quotas and the snapshot when nothing was published', async () => {
    const { reader: read } = await reader(Date.now)
    await expect(read.snapshot()).rejects.toMatchObject({ code: 'not_found' })
    await expect(read.quotas()).rejects.toMatchObject({ code: 'not_found' })
  })
})
