import { describe, expect, it } from 'vitest'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import { createEdgeApp } from '../../../workers/app/edge-app.ts'
import { createEdgeMetrics } from '../../../workers/app/edge-metrics.ts'
import { useDemoEdgeFixture } from '../../support/demo-edge-fixture.ts'

// A pod without vLLM's --enable-prompt-tokens-details (or an older vLLM's count of 0)
// leaves prompt_tokens_details out; the client still gets cached_tokens, 0.

const demo = useDemoEdgeFixture()
const usage = { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 }
const chunk = (extra: Record<string, unknown>) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'qwen3.8-27b-fp8',
  ...extra,
})
const sse = () =>
  new Response(
    [
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' } }] }),
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      chunk({ choices: [], usage }),
    ]
      .map((c) => `data: ${JSON.stringify(c)}\n\n`)
      .join('')
      .concat('data: [DONE]\n\n'),
    { headers: { 'content-type': 'text/event-stream' } },
  )
const json = () =>
  Response.json({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 0,
    model: 'qwen3.8-27b-fp8',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    usage,
  })

function edge(upstream: () => Response) {
  const app = createEdgeApp({
    config: async () => demo.snapshot,
    quotas: createMemoryQuotaStore(),
    scorer: {
      route: async () => {
        throw new Error('the demo decides qwen3.8-27b-fp8 with the scorer; here without it')
      },
      forward: async () => upstream(),
    },
    external: {
      complete: async () => {
        throw new Error('no external attempt expected')
      },
      countTokens: async () => null,
    },
    metrics: createEdgeMetrics(),
    nowMs: () => 0,
    sleep: async () => {},
    newRequestId: () => 'req-1',
    log: () => {},
  })
  return (body: Record<string, unknown>) =>
    app.fetch(
      new Request('http://edge/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${demo.demoKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'qwen3.8-27b-fp8',
          messages: [{ role: 'user', content: 'Hello' }],
          max_tokens: 8,
          ...body,
        }),
      }),
    )
}

const cachedOf = (value: unknown) =>
  (value as { usage?: { prompt_tokens_details?: { cached_tokens?: unknown } } }).usage
    ?.prompt_tokens_details?.cached_tokens

describe('usage.prompt_tokens_details.cached_tokens', () => {
  it('is 0 in a JSON answer assembled from a stream that left it out', async () => {
    const answer = await edge(sse)({})
    expect(answer.status).toBe(200)
    expect(cachedOf(await answer.json())).toBe(0)
  })

  it('is 0 in a JSON answer passed on as the pod wrote it', async () => {
    // prompt_logprobs: a request a stream cannot answer, so the pod's JSON passes on.
    const answer = await edge(json)({ prompt_logprobs: 1 })
    expect(answer.status).toBe(200)
    expect(cachedOf(await answer.json())).toBe(0)
  })

  it('is 0 in a streamed usage chunk, token chunks passing as they came', async () => {
    const answer = await edge(sse)({ stream: true, stream_options: { include_usage: true } })
    const text = await answer.text()
    const events = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>)
    const last = events.at(-1)
    expect(cachedOf(last)).toBe(0)
    expect(events[0]).toEqual(
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' } }] }),
    )
  })
})
