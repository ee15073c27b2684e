import { describe, expect, it } from 'vitest'
import { mergePodViews, ReplicaPodViews } from '../../../shared/state/pod-state.ts'
import { podView } from '../../support/state-store-conformance.ts'

const t0 = 1_800_000_000_000

describe('mergePodViews', () => {
  it('merges each pod over the replicas that route to it', () => {
    const views: ReplicaPodViews[] = [
      {
        replica: 'r1',
        writtenAtMs: t0,
        pools: [],
        pods: [
          podView('pod-0', { inFlight: 2, pending: 1, metricsAtMs: t0 - 500, waiting: 3 }),
          podView('pod-1'),
        ],
      },
      {
        replica: 'r2',
        writtenAtMs: t0,
        pools: [],
        pods: [
          podView('pod-0', {
            inFlight: 3,
            pending: 0,
            metricsAtMs: t0 - 100,
            waiting: 5,
            kvCacheUsage: 0.75,
            healthy: false,
            indexReady: false,
            trust: 'approximate',
            drift: 0.2,
            driftObservations: 4,
            ttft: { overheadMs: 30, msPerToken: 0.2, observations: 9 },
            events: {
              lastSeq: '12',
              lastBatchAtMs: t0 - 50,
              batches: 13,
              replays: 2,
              gaps: 1,
              restarts: 1,
            },
          }),
        ],
      },
    ]
    const [pod0, pod1] = mergePodViews(views)
    expect(pod0).toMatchObject({
      pod: 'pod-0',
      replicas: ['r1', 'r2'],
      // Any replica that saw it fail; ready while any replica's ingest is; the worst trust.
      healthy: false,
      indexReady: true,
      trust: 'approximate',
      drift: 0.2,
      driftObservations: 4,
      // Metrics from the freshest scrape, load summed over the replicas.
      waiting: 5,
      kvCacheUsage: 0.75,
      metricsAtMs: t0 - 100,
      inFlight: 5,
      pending: 1,
      ttft: { overheadMs: 30, msPerToken: 0.2, observations: 9 },
      events: {
        lastSeq: '12',
        lastBatchAtMs: t0, // the latest batch any replica applied
        batches: 13,
        replays: 3,
        gaps: 1,
        restarts: 1,
      },
    })
    expect(pod1).toMatchObject({ pod: 'pod-1', replicas: ['r1'], inFlight: 1 })
  })

  it('keeps pods of the same name in different pools apart, sorted by pool then pod', () => {
    const merged = mergePodViews([
      {
        replica: 'r1',
        writtenAtMs: t0,
        pools: [],
        pods: [
          podView('b', { pool: 'ns/y' }),
          podView('a', { pool: 'ns/x' }),
          podView('b', { pool: 'ns/x' }),
        ],
      },
    ])
    expect(merged.map((p) => `${p.pool} ${p.pod}`)).toEqual(['ns/x a', 'ns/x b', 'ns/y b'])
  })

  it('compares event seqs as 64-bit numbers, not as text', () => {
    const events = (lastSeq: string) => ({
      lastSeq,
      lastBatchAtMs: t0,
      batches: 1,
      replays: 0,
      gaps: 0,
      restarts: 0,
    })
    const [pod] = mergePodViews([
      {
        replica: 'r1',
        writtenAtMs: t0,
        pools: [],
        pods: [podView('p', { events: events('18446744073709551610') })],
      },
      { replica: 'r2', writtenAtMs: t0, pools: [], pods: [podView('p', { events: events('9') })] },
    ])
    expect(pod?.events?.lastSeq).toBe('18446744073709551610')
  })

  it('the schema refuses a view with a field out of range', () => {
    const bad = { replica: 'r', writtenAtMs: t0, pods: [podView('p', { inFlight: -1 })] }
    expect(ReplicaPodViews.safeParse(bad).success).toBe(false)
  })
})
