import { describe, expect, it } from 'vitest'
import type { DecisionEntry } from '../../shared/state/decision-entry.ts'
import type { PodView, ReplicaPodViews } from '../../shared/state/pod-state.ts'
import type { StateStore } from '../../shared/state/state-store.ts'

const t0 = 1_800_000_000_000

export function podView(pod: string, patch: Partial<PodView> = {}): PodView {
  return {
    pool: 'demo/sim-27b',
    pod,
    strategy: 'kinference',
    healthy: true,
    indexReady: true,
    trust: 'precise',
    drift: 0,
    driftObservations: 0,
    blocksIndexed: 10,
    kvCacheUsage: 0.25,
    running: 1,
    waiting: 0,
    metricsAtMs: t0,
    inFlight: 1,
    pending: 0,
    ttft: { overheadMs: 20, msPerToken: 0.1, observations: 3 },
    events: {
      lastSeq: '7',
      lastBatchAtMs: t0,
      batches: 8,
      replays: 1,
      gaps: 0,
      restarts: 0,
    },
    ...patch,
  }
}

export function decided(requestId: string, atMs: number, patch: Partial<DecisionEntry> = {}) {
  return {
    kind: 'decided',
    atMs,
    requestId,
    replica: 'r1',
    tenant: 'demo',
    policy: 'demo/demo',
    rule: 'local-first',
    backend: 'sim-27b',
    pool: 'demo/sim-27b',
    pod: 'pod-0',
    strategy: 'kinference',
    model: 'qwen3.8-27b-fp8',
    promptTokens: 100,
    matchedTokens: 64,
    predictedTtftMs: 50,
    heldMs: 0,
    ...patch,
  } as DecisionEntry
}

export function ended(requestId: string, atMs: number, patch: Partial<DecisionEntry> = {}) {
  return {
    kind: 'ended',
    atMs,
    requestId,
    pod: 'pod-0',
    ttftMs: 60,
    latencyMs: 400,
    cachedTokens: 64,
    outputTokens: 8,
    outcome: 'completed',
    status: 200,
    ...patch,
  } as DecisionEntry
}

const replica = (name: string, writtenAtMs: number, pods: PodView[]): ReplicaPodViews => ({
  replica: name,
  writtenAtMs,
  pods,
  pools: [],
})

/** What every StateStore shares (memory, Redis), with passed-in clocks. */
export function describeStateStoreConformance(
  name: string,
  create: (options: { maxDecisions?: number }) => Promise<StateStore>,
): void {
  describe(`${name} state store`, () => {
    it('keeps each replica view until its TTL, the latest write replacing the earlier', async () => {
      const store = await create({})
      await store.writePodViews(replica('r1', t0, [podView('pod-0')]), 60_000)
      await store.writePodViews(replica('r1', t0, [podView('pod-1')]), 60_000)
      await store.writePodViews(replica('r2', t0, [podView('pod-0')]), 60_000)
      const views = await store.readPodViews(t0 + 1_000)
      expect(views.map((v) => v.replica).sort()).toEqual(['r1', 'r2'])
      expect(views.find((v) => v.replica === 'r1')?.pods.map((p) => p.pod)).toEqual(['pod-1'])
      expect(await store.readPodViews(t0 + 60_001)).toEqual([])
      await store.close()
    })

    it('is empty before anything is written', async () => {
      const store = await create({})
      expect(await store.readPodViews(t0)).toEqual([])
      expect(await store.readDecisions({})).toEqual([])
      await store.close()
    })

    it('reads decisions in order, from a time or after an id, the newest when capped', async () => {
      const store = await create({})
      await store.appendDecisions([decided('a', t0), ended('a', t0 + 5)])
      await store.appendDecisions([decided('b', t0 + 10)])
      const all = await store.readDecisions({})
      expect(all.map((e) => `${e.entry.kind}:${e.entry.requestId}`)).toEqual([
        'decided:a',
        'ended:a',
        'decided:b',
      ])
      expect(all[0]?.entry).toEqual(decided('a', t0))
      const after = await store.readDecisions({ afterId: all[0]?.id as string })
      expect(after.map((e) => e.id)).toEqual([all[1]?.id, all[2]?.id])
      const last = await store.readDecisions({ count: 1 })
      expect(last.map((e) => e.entry.requestId)).toEqual(['b'])
      await store.close()
    })

    it('filters by time with the entries own clock', async () => {
      const store = await create({})
      // Redis stamps ids with its own clock; entries are appended as they happen.
      const now = Date.now()
      await store.appendDecisions([decided('old', now - 60_000)])
      await new Promise((resolve) => setTimeout(resolve, 5))
      const cut = Date.now()
      await new Promise((resolve) => setTimeout(resolve, 5))
      await store.appendDecisions([decided('new', Date.now())])
      const since = await store.readDecisions({ sinceMs: cut })
      expect(since.map((e) => e.entry.requestId)).toEqual(['new'])
      await store.close()
    })

    it('keeps about the last maxDecisions entries', async () => {
      const store = await create({ maxDecisions: 10 })
      for (let i = 0; i < 300; i++) await store.appendDecisions([decided(`r${i}`, t0 + i)])
      const kept = await store.readDecisions({ count: 10_000 })
      // Redis trims whole nodes (MAXLEN ~): at least N kept, not many more.
      expect(kept.length).toBeGreaterThanOrEqual(10)
      expect(kept.length).toBeLessThan(300)
      expect(kept.at(-1)?.entry.requestId).toBe('r299')
      await store.close()
    })
  })
}
