import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import type { QuotaStore } from '../../../../shared/quota/quota-store.ts'
import { answerError } from '../../../../workers/app/answer-error.ts'
import { createEdgeMetrics } from '../../../../workers/app/edge-metrics.ts'
import type { EdgeRequest } from '../../../../workers/app/read-edge-request.ts'
import { admitRequest } from '../../../../workers/app/stages/admit-request.ts'
import { type EdgeEnv, edgeStage, inOrder } from '../../../../workers/app/stages/edge-stage.ts'
import { tagRequest } from '../../../../workers/app/stages/tag-request.ts'
import { tenantTerms } from '../../../../workers/app/stages/tenant-terms.ts'

describe('inOrder', () => {
  it('refuses a stage that reads what no stage before it set', () => {
    const reads = edgeStage('reads', { reads: ['terms'] }, async () => new Response('ok'))
    // The type-checker refuses the call too; the runtime check is what a test can see.
    const unchecked = inOrder as (...stages: unknown[]) => unknown
    expect(() =>
      unchecked(
        tagRequest(() => 'id'),
        reads,
      ),
    ).toThrow('stage reads reads terms before any stage sets it')
    expect(() => unchecked(tenantTerms())).toThrow(
      'stage tenantTerms reads snapshot, identity before any stage sets it',
    )
  })

  it('runs the stages in the order given, each seeing what the earlier ones set', async () => {
    const app = new Hono<EdgeEnv>()
    const seen: string[] = []
    app.get(
      '/',
      ...inOrder(
        tagRequest(() => 'edge-1'),
        edgeStage('answer', { reads: ['requestId', 'edgeId', 'passHeaders'] }, async (c) => {
          seen.push(c.get('requestId'), c.get('edgeId'), JSON.stringify(c.get('passHeaders')))
          return c.text('ok')
        }),
      ),
    )
    const response = await app.request('/', {
      headers: { 'x-request-id': 'client-7', traceparent: 'tp', other: 'x' },
    })
    expect(await response.text()).toBe('ok')
    expect(seen).toEqual([
      'client-7',
      'edge-1',
      JSON.stringify({ 'x-request-id': 'client-7', traceparent: 'tp' }),
    ])
  })
})

describe('admitRequest', () => {
  /** A quota store that admits everything and records what is settled. */
  function recordingStore() {
    const settled: { estimated: number; actual: number }[] = []
    const store: QuotaStore = {
      async admit() {
        return { admitted: true, reservation: 'r1' }
      },
      async settle(_account, _limits, _reservation, estimated, actual) {
        settled.push({ estimated, actual })
      },
    }
    return { store, settled }
  }

  /** An app whose request has a 100-token prompt and max_tokens 10, then `after`. */
  function app(store: QuotaStore, after: Parameters<typeof edgeStage<'admitted'>>[2]) {
    const given = edgeStage('given', { sets: ['request', 'terms'] }, async (c, next) => {
      const request = { tenant: 't', promptTokens: 100, sequences: 1, maxTokens: 10 }
      c.set('request', request as EdgeRequest)
      c.set('terms', { quotas: { tokensPerMinute: 10_000 }, decisionHeaders: false })
      await next()
    })
    const deps = { quotas: store, metrics: createEdgeMetrics(), nowMs: () => 0, log: () => {} }
    const hono = new Hono<EdgeEnv>()
    hono.onError(answerError(() => {}))
    hono.post(
      '/',
      ...inOrder(
        given,
        admitRequest(deps, 1_024),
        edgeStage('after', { reads: ['admitted'] }, after),
      ),
    )
    return hono
  }

  const settledSoon = async (settled: unknown[]) => {
    for (let i = 0; i < 10 && settled.length === 0; i++) await new Promise((r) => setTimeout(r, 5))
    return settled
  }

  it('settles on what a later stage charges, once', async () => {
    const { store, settled } = recordingStore()
    const response = await app(store, async (c) => {
      c.get('admitted').charge(42)
      c.get('admitted').charge(7)
      return c.text('ok')
    }).request('/', { method: 'POST' })
    expect(response.status).toBe(200)
    expect(await settledSoon(settled)).toEqual([{ estimated: 110, actual: 42 }])
  })

  it('charges nothing for a request a later stage fails, whose error is still answered', async () => {
    const { store, settled } = recordingStore()
    const response = await app(store, async () => {
      throw new KinfError('upstream_unavailable', 'down')
    }).request('/', { method: 'POST' })
    expect(response.status).toBe(503)
    expect(await response.json()).toMatchObject({ error: { message: 'down' } })
    expect(await settledSoon(settled)).toEqual([{ estimated: 110, actual: 0 }])
  })

  it('charges the prompt when the client left before a later stage failed', async () => {
    const { store, settled } = recordingStore()
    const client = new AbortController()
    await app(store, async () => {
      client.abort()
      throw new KinfError('upstream_unavailable', 'down')
    }).request('/', { method: 'POST', signal: client.signal })
    expect(await settledSoon(settled)).toEqual([{ estimated: 110, actual: 100 }])
  })
})
