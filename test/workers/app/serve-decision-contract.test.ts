import { describe, expect, it } from 'vitest'
import type { EdgeClaims } from '../../../shared/auth/edge-signature.ts'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import type { RouteDecision } from '../../../shared/scorer-api/route-protocol.ts'
import { createEdgeApp } from '../../../workers/app/edge-app.ts'
import { createEdgeMetrics } from '../../../workers/app/edge-metrics.ts'
import {
  demoBedrock,
  demoLocal,
  demoServe,
  useDemoEdgeFixture,
} from '../../support/demo-edge-fixture.ts'

// The demo bursts qwen3.8-27b-fp8 from demo/sim-local to demo/bedrock-claude. The scorer
// asks the pool with leave to burst; a request Bedrock cannot honour must then wait there.

const demo = useDemoEdgeFixture()
const local = demoLocal
const bedrock = demoBedrock
const serve = demoServe
const completion = () =>
  Response.json({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 0,
    model: 'qwen3.8-27b-fp8',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
  })

function edge(route: RouteDecision) {
  const forwarded: EdgeClaims[] = []
  let external = 0
  const app = createEdgeApp({
    config: async () => demo.snapshot,
    quotas: createMemoryQuotaStore(),
    scorer: {
      route: async () => ({ kind: 'decided', decided: route }),
      forward: async (_path, _body, claims) => {
        forwarded.push(claims)
        return completion()
      },
    },
    external: {
      complete: async () => {
        external++
        return completion()
      },
      countTokens: async () => null,
    },
    metrics: createEdgeMetrics(),
    nowMs: () => 0,
    sleep: async () => {},
    newRequestId: () => 'req-1',
    log: () => {},
  })
  const ask = (extra: Record<string, unknown>) =>
    app.fetch(
      new Request('http://edge/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${demo.demoKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'qwen3.8-27b-fp8',
          messages: [{ role: 'user', content: 'Hello' }],
          max_tokens: 8,
          stream: false,
          ...extra,
        }),
      }),
    )
  return { ask, forwarded, external: () => external }
}

describe('a request Bedrock cannot honour, handed over for a burst', () => {
  it('waits on the pool that answered saturated instead of bursting', async () => {
    const { ask, forwarded, external } = edge({
      decision: serve(local, bedrock),
      from: 1,
      notes: ['demo/sim-local: saturated'],
      promptTokens: 9,
    })
    const answer = await ask({ seed: 7, prompt_logprobs: 1 })
    expect(answer.status).toBe(200)
    expect(external()).toBe(0)
    expect(forwarded).toHaveLength(1)
    expect(forwarded[0]).toMatchObject({ backends: ['sim-local'], allowBurst: false })
    expect(answer.headers.get('x-kinference-fallback')).toBe(
      'demo/sim-local: saturated; demo/bedrock-claude: not burst, external backends (Bedrock) cannot honour seed (Bedrock takes no seed), prompt_logprobs (a vLLM option)',
    )
  })

  it('still bursts a request it can honour', async () => {
    const { ask, forwarded, external } = edge({
      decision: serve(local, bedrock),
      from: 1,
      notes: ['demo/sim-local: saturated'],
      promptTokens: 9,
    })
    expect((await ask({ temperature: 0.2 })).status).toBe(200)
    expect(external()).toBe(1)
    expect(forwarded).toHaveLength(0)
  })
})
