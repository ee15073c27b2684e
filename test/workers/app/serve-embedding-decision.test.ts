import { describe, expect, it } from 'vitest'
import type { EdgeClaims } from '../../../shared/auth/edge-signature.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { createEdgeApp } from '../../../workers/app/edge-app.ts'
import { createEdgeMetrics } from '../../../workers/app/edge-metrics.ts'
import type { ScorerPort } from '../../../workers/app/scorer-client.ts'
import { useDemoEdgeFixture } from '../../support/demo-edge-fixture.ts'
import { recordingQuotaStore } from '../../support/recording-quota-store.ts'

// POST /v1/embeddings through the edge's stages over a recording scorer port: what the
// scorer is asked, what the client gets, what the tenant is charged. The demo policy serves
// qwen3-embedding-0.6b from demo/sim-embed-local only, and claude-sonnet from Bedrock only.
// The whole path over real pods is test/control-plane/lab/embedded/embeddings-end-to-end.test.ts.

const demo = useDemoEdgeFixture()
const model = 'qwen3-embedding-0.6b'

interface Forwarded {
  path: string
  body: string
  claims: EdgeClaims
}

const embeddings = (promptTokens: number) =>
  Response.json(
    {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.6, 0.8] }],
      model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    },
    { headers: { 'x-kinference-prompt-tokens': String(promptTokens) } },
  )

function edge(forward: ScorerPort['forward'] = async () => embeddings(7)) {
  const forwarded: Forwarded[] = []
  const quotas = recordingQuotaStore()
  const metrics = createEdgeMetrics()
  const app = createEdgeApp({
    config: async () => demo.snapshot,
    quotas,
    scorer: {
      route: async () => {
        throw new Error('an embedding is decided at the edge')
      },
      forward: async (path, body, claims, headers, signal) => {
        forwarded.push({ path, body, claims })
        return forward(path, body, claims, headers, signal)
      },
    },
    external: {
      complete: async () => {
        throw new Error('an embedding never leaves the cluster')
      },
      countTokens: async () => null,
    },
    metrics,
    nowMs: () => Date.now(),
    sleep: async () => {},
    newRequestId: () => 'req-1',
    log: () => {},
  })
  const ask = (body: unknown, headers: Record<string, string> = {}) =>
    app.fetch(
      new Request('http://edge/v1/embeddings', {
        method: 'POST',
        headers: { authorization: `Bearer ${demo.demoKey}`, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    )
  return { ask, forwarded, quotas, metrics }
}

const errorOf = async (answer: Response) =>
  ((await answer.json()) as { error: { type: string; code: string; param: string | null } }).error

describe('POST /v1/embeddings at the edge', () => {
  it('goes to the scorer for the policy’s pool, the body as sent, and charges the pod’s usage', async () => {
    const { ask, forwarded, quotas, metrics } = edge()
    const body = JSON.stringify({ model, input: ['first text', 'second text'] })
    const answer = await ask(body)
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-request-id')).toBe('req-1')
    expect(answer.headers.get('x-ratelimit-limit-tokens')).toBe('2000000')
    expect(await answer.json()).toMatchObject({ usage: { prompt_tokens: 7 } })
    expect(forwarded).toHaveLength(1)
    expect(forwarded[0]).toMatchObject({
      path: '/v1/embeddings',
      body,
      claims: {
        tenant: 'demo',
        backends: ['sim-embed-local'],
        decidedBy: { policy: 'demo/demo', rule: 'embeddings-in-cluster' },
        detectorFailed: false,
      },
    })
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(quotas.settlements).toEqual([
      { account: 'demo', estimatedTokens: expect.any(Number), actualTokens: 7 },
    ])
    expect(metrics.render()).toMatch(
      /kinference_edge_requests_total\{[^}]*model="qwen3-embedding-0\.6b"[^}]*status="200"/,
    )
  })

  it('labels personal data in any input, and token ids the scan cannot read fail closed', async () => {
    const { ask, forwarded } = edge()
    await ask({ model, input: ['fine', 'charge my card 4111 1111 1111 1111 today'] })
    expect(forwarded[0]?.claims.labels).toContain('pii')
    expect(forwarded[0]?.claims.detectorFailed).toBe(false)
    await ask({ model, input: [[1, 2, 3]] })
    expect(forwarded[1]?.claims.detectorFailed).toBe(true)
  })

  it('refuses, in OpenAI’s shape and before any upstream, what it cannot serve', async () => {
    const { ask, forwarded } = edge()
    const bad = await ask({ model, input: [] })
    expect(bad.status).toBe(400)
    expect(await errorOf(bad)).toMatchObject({ type: 'invalid_request_error', param: 'input' })
    const unknown = await ask({ model: 'no-such-model', input: 'x' })
    expect(unknown.status).toBe(404)
    expect(await errorOf(unknown)).toMatchObject({ code: 'model_not_found' })
    // Served only by Bedrock, which has no embeddings: the client's to change, not a 5xx.
    const external = await ask({ model: 'claude-sonnet', input: 'x' })
    expect(external.status).toBe(400)
    expect(await errorOf(external)).toMatchObject({ code: 'model_not_supported', param: 'model' })
    const queueJump = await ask({ model, input: 'x', priority: -10 })
    expect(queueJump.status).toBe(400)
    expect(await errorOf(queueJump)).toMatchObject({ param: 'priority' })
    const notJson = await ask('{"model":')
    expect(notJson.status).toBe(400)
    expect(forwarded).toHaveLength(0)
  })

  it('passes the pool’s error on, charging nothing, and an unreachable scorer is a 503', async () => {
    const refused = edge(async () =>
      Response.json(
        { error: { message: 'too long', type: 'BadRequestError', code: 400 } },
        { status: 400 },
      ),
    )
    const answer = await refused.ask({ model, input: 'x' })
    expect(answer.status).toBe(400)
    expect(await errorOf(answer)).toMatchObject({ type: 'invalid_request_error' })
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(refused.quotas.settlements.map((s) => s.actualTokens)).toEqual([0])
    const down = edge(async () => {
      throw new KinfError('upstream_unavailable', 'scorer unreachable: refused')
    })
    const unreachable = await down.ask({ model, input: 'x' })
    expect(unreachable.status).toBe(503)
  })
})
