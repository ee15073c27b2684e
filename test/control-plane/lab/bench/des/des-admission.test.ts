import { describe, expect, it } from 'vitest'
import { DesAdmission } from '../../../../../control-plane/lab/bench/des/des-admission.ts'
import { type DesJob, runDesJob } from '../../../../../control-plane/lab/bench/des/des-job.ts'
import { loadSimModelAssets } from '../../../../../control-plane/lab/sim/sim-model-assets.ts'
import { createSeededRandom } from '../../../../../shared/random/create-seeded-random.ts'
import type { RouteResult } from '../../../../../shared/routing/pool-router.ts'
import {
  request,
  routeOf,
  scraped,
} from '../../../../shared/routing/admission/admission-fixtures.ts'

/** kinference's view: pod a chosen, predicted `ttftMs` (and `tpotMs`) there. */
function predicted(ttftMs: number, tpotMs?: number): RouteResult {
  const route = routeOf([scraped('a', 0, 0.1)])
  route.predictedTtftMs.set('a', ttftMs)
  if (tpotMs !== undefined) route.predictedTpotMs.set('a', tpotMs)
  return route
}

/** The request arriving on `route`, the pool's prediction its chosen pod's plus `heldWaitMs`. */
const arriving = (route: RouteResult, heldWaitMs = 0) => {
  const pod = route.decision.pod ?? ''
  const ttftMs = route.predictedTtftMs.get(pod)
  return {
    route,
    request: request({ promptTokens: 1_000 }),
    predicted:
      ttftMs === undefined
        ? null
        : { ttftMs: ttftMs + heldWaitMs, tpotMs: route.predictedTpotMs.get(pod) ?? null },
    nowMs: 10_000,
  }
}
const admission = (strategy: string, options = {}) =>
  new DesAdmission({ sloTtftMs: 2_000, ...options }, strategy, 1, createSeededRandom(1))

describe('admission in the DES', () => {
  it('refuses for kinference what its prediction says will miss the objective, the held wait included', () => {
    const own = admission('kinference')
    expect(own.decide(arriving(predicted(1_900)), 100)).toEqual({ kind: 'local', deadlineMs: null })
    expect(own.decide(arriving(predicted(2_100)), 100)).toEqual({
      kind: 'refused',
      status: 429,
      code: 'slo_unattainable',
    })
    expect(own.decide(arriving(predicted(1_500), 600), 100).kind).toBe('refused')
  })

  it('refuses on a time-per-token objective as well, where one is set', () => {
    const own = admission('kinference', { sloTpotMs: 100 })
    expect(own.decide(arriving(predicted(300, 99)), 100).kind).toBe('local')
    expect(own.decide(arriving(predicted(300, 101)), 100).kind).toBe('refused')
  })

  it('holds with a deadline of the objective less the pod’s own time, when asked to', () => {
    const own = admission('kinference', { hold: true })
    expect(own.holds).toBe(true)
    expect(own.decide(arriving(predicted(500)), 100)).toEqual({ kind: 'local', deadlineMs: 11_500 })
    expect(admission('dynamo', { hold: true }).holds).toBe(false)
  })

  it('holds each peer to its own rule: Dynamo 529 when all busy, llm-d 429 when saturated, others none', () => {
    const busy = routeOf([scraped('a', 0, 0.95), scraped('b', 0, 0.9)])
    expect(admission('dynamo').decide(arriving(busy), 100)).toMatchObject({ status: 529 })
    const saturated = routeOf([scraped('a', 9, 0.9), scraped('b', 9, 0.9)])
    expect(admission('llmd-sticky').decide(arriving(saturated), 100)).toMatchObject({
      status: 429,
    })
    expect(admission('round-robin').decide(arriving(saturated), 100).kind).toBe('local')
    expect(admission('llmd-sticky', { gate: 'none' }).decide(arriving(saturated), 100).kind).toBe(
      'local',
    )
  })

  it('bursts what it refuses to the provider, never a request carrying personal data', () => {
    const burst = admission('kinference', { burst: true })
    const step = burst.decide(arriving(predicted(5_000)), 100)
    expect(step.kind).toBe('provider')
    if (step.kind === 'provider') expect(step.firstTokenMs).toBeGreaterThan(10_000)
    const personal = admission('kinference', { burst: true, piiShare: 1 })
    expect(personal.decide(arriving(predicted(5_000)), 100).kind).toBe('refused')
  })

  it('draws each conversation’s tenant by weight from the seed and the conversation alone', () => {
    const tenants = [
      { name: 'A', weight: 10 },
      { name: 'B', weight: 1 },
    ]
    const one = admission('kinference', { tenants })
    const again = admission('kinference', { tenants })
    const drawn = Array.from({ length: 2_200 }, (_, i) => one.tenantOf(i))
    expect(drawn).toEqual(Array.from({ length: 2_200 }, (_, i) => again.tenantOf(i)))
    const bs = drawn.filter((t) => t === 'B').length
    expect(bs).toBeGreaterThan(150)
    expect(bs).toBeLessThan(250)
    expect(admission('kinference').tenantOf(3)).toBeNull()
  })

  it('refuses options that make no sense, naming them', () => {
    expect(() => admission('kinference', { piiShare: 2 })).toThrow(/piiShare/)
    expect(() => admission('kinference', { tenants: [{ name: 'A', weight: 0 }] })).toThrow(
      /tenants/,
    )
  })
})

describe('a DES run with admission', () => {
  const job = (admission: DesJob['admission']): DesJob => ({
    workloadName: 'shared-prefix',
    data: 'prefix_count=8,prefix_tokens=2048,prompt_tokens=256,output_tokens=128',
    profile: 'poisson',
    rate: 40,
    router: 'kinference',
    maxRequests: 300,
    pods: 2,
    gpuProfile: 'l40s-27b-fp8',
    seed: 3,
    ...(admission ? { admission } : {}),
  })

  it('refuses past capacity without bursting, sends the refused to the provider with it, the same for a seed', async () => {
    const assets = loadSimModelAssets()
    const shed = await runDesJob(job({ sloTtftMs: 1_000, hold: true }), assets)
    const refused = shed.records.filter((r) => r.error !== null)
    expect(refused.length).toBeGreaterThan(30)
    expect(refused.every((r) => r.error === '429 slo_unattainable' && r.pod === null)).toBe(true)
    const burst = await runDesJob(job({ sloTtftMs: 1_000, hold: true, burst: true }), assets)
    const provided = burst.records.filter((r) => r.pod === 'provider')
    expect(provided.length).toBeGreaterThan(30)
    expect(burst.records.filter((r) => r.error !== null)).toHaveLength(0)
    const again = await runDesJob(job({ sloTtftMs: 1_000, hold: true, burst: true }), assets)
    expect(again.records).toEqual(burst.records)
    const none = await runDesJob(job(undefined), assets)
    expect(none.records.filter((r) => r.error !== null || r.pod === 'provider')).toHaveLength(0)
  })
})
