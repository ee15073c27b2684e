import { describe, expect, it } from 'vitest'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import type { RouteDecision } from '../../../shared/scorer-api/route-protocol.ts'
import { createEdgeApp } from '../../../workers/app/edge-app.ts'
import type { ExternalPort } from '../../../workers/app/edge-deps.ts'
import { createEdgeMetrics } from '../../../workers/app/edge-metrics.ts'
import type { ScorerPort } from '../../../workers/app/scorer-client.ts'
import {
  demoBedrock,
  demoLocal,
  demoServe,
  useDemoEdgeFixture,
} from '../../support/demo-edge-fixture.ts'

// The edge's serve step over fake ports: the attempt planner's steps as a client sees them.
// The demo policy bursts qwen3.8-27b-fp8 from demo/sim-local to demo/bedrock-claude (both
// status-dependent, so the scorer is asked first) and keeps requests labelled pii local.

const demo = useDemoEdgeFixture()
const local = demoLocal
const bedrock = demoBedrock
const serve = demoServe

const completion = () =>
  Response.json({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 0,
    model: 'claude-sonnet',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
  })
/** An answer's OpenAI error body. */
const errorOf = async (answer: Response) =>
  ((await answer.json()) as { error: { message: string; code: string } }).error

const saturated = () =>
  Response.json(
    { error: { message: 'pool saturated', type: 'saturated', param: null, code: 'saturated' } },
    { status: 503, headers: { 'x-kinference-saturated': '1', 'retry-after': '1' } },
  )

interface Ports {
  route: () => Promise<RouteDecision>
  forward?: () => Promise<Response>
  complete?: () => Promise<Response>
}

function edge(ports: Ports) {
  const metrics = createEdgeMetrics()
  const scorer: ScorerPort = {
    route: async () => ({ kind: 'decided', decided: await ports.route() }),
    forward: ports.forward ?? (async () => completion()),
  }
  const external: ExternalPort = {
    complete: ports.complete ?? (async () => completion()),
    countTokens: async () => null,
  }
  const app = createEdgeApp({
    config: async () => demo.snapshot,
    quotas: createMemoryQuotaStore(),
    scorer,
    external,
    metrics,
    nowMs: () => Date.now(),
    sleep: async () => {},
    newRequestId: () => 'req-1',
    log: () => {},
  })
  const ask = async (headers: Record<string, string> = {}) =>
    app.fetch(
      new Request('http://edge/v1/chat/completions', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${demo.demoKey}`,
          'content-type': 'application/json',
          ...headers,
        },
        body: JSON.stringify({
          model: 'qwen3.8-27b-fp8',
          messages: [{ role: 'user', content: 'Hello' }],
          max_tokens: 8,
        }),
      }),
    )
  return { ask, metrics }
}

describe('the edge carrying out a decision', () => {
  it('goes on from the attempt the scorer handed over, with its notes, and counts a burst', async () => {
    const { ask, metrics } = edge({
      route: async () => ({
        decision: serve(local, bedrock),
        from: 1,
        notes: ['demo/sim-local: saturated'],
        promptTokens: 9,
      }),
    })
    const answer = await ask()
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-kinference-fallback')).toBe('demo/sim-local: saturated')
    expect(answer.headers.get('x-kinference-decision')).toContain('backend=demo/bedrock-claude')
    expect(metrics.render()).toContain(
      'kinference_edge_burst_total{backend="demo/bedrock-claude"} 1',
    )
  })

  it('moves past a saturated pool and an unreachable scorer, noting each', async () => {
    const answers = [saturated]
    const { ask, metrics } = edge({
      route: async () => ({
        decision: serve(local, local, bedrock),
        from: 0,
        notes: [],
        promptTokens: 9,
      }),
      forward: async () => {
        const next = answers.shift()
        if (next) return next()
        throw new KinfError('upstream_unavailable', 'scorer unreachable: refused')
      },
    })
    const answer = await ask()
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-kinference-fallback')).toBe(
      'demo/sim-local: saturated; demo/sim-local: scorer unreachable',
    )
    expect(metrics.render()).toContain('kinference_edge_scorer_unreachable_total 1')
  })

  it('refuses a request held local with 503 and Retry-After once the pool is saturated', async () => {
    const { ask, metrics } = edge({
      route: async () => ({
        decision: serve(local),
        from: 1,
        notes: ['demo/sim-local: saturated'],
        promptTokens: 9,
      }),
      complete: async () => {
        throw new Error('a request held local reached Bedrock')
      },
    })
    const answer = await ask({ 'x-kinference-labels': 'pii' })
    expect(answer.status).toBe(503)
    expect(answer.headers.get('retry-after')).toBe('5')
    const error = await errorOf(answer)
    expect(error.code).toBe('locality_violation')
    expect(error.message).toContain('(demo/sim-local: saturated)')
    expect(metrics.render()).toContain(
      'kinference_edge_pii_kept_local_total{constraint="pii-in-cluster"} 1',
    )
  })

  it('never sends a request held local outside, even when the decision names Bedrock', async () => {
    const { ask } = edge({
      route: async () => ({ decision: serve(bedrock), from: 0, notes: [], promptTokens: 9 }),
      complete: async () => {
        throw new Error('a request held local reached Bedrock')
      },
    })
    const answer = await ask({ 'x-kinference-labels': 'pii' })
    // Nothing in the cluster could ever serve it: a 400, retrying will not help.
    expect(answer.status).toBe(400)
    expect((await errorOf(answer)).message).toContain('retrying will not help')
  })

  it('answers the last attempt’s own error when it fails', async () => {
    const { ask } = edge({
      route: async () => ({ decision: serve(local, bedrock), from: 0, notes: [], promptTokens: 9 }),
      forward: async () => saturated(),
      complete: async () => {
        throw new KinfError('upstream_error', 'bedrock: throttled', { status: 503 })
      },
    })
    const answer = await ask()
    expect(answer.status).toBe(503)
    expect((await errorOf(answer)).message).toBe('bedrock: throttled')
  })
})
