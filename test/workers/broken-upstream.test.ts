import { describe, expect, it } from 'vitest'
import { createMemoryQuotaStore } from '../../shared/quota/memory-quota-store.ts'
import { createEdgeApp } from '../../workers/app/edge-app.ts'
import { createEdgeMetrics } from '../../workers/app/edge-metrics.ts'
import { createExternalProviders } from '../../workers/app/external-providers.ts'
import { createScorerClient } from '../../workers/app/scorer-client.ts'
import { useDemoEdgeFixture } from '../support/demo-edge-fixture.ts'

const demo = useDemoEdgeFixture()

/** A scorer whose answer starts, then its connection breaks (the scorer or its pod died). */
function breakingScorer(contentType: string, first: string): typeof fetch {
  return async () => {
    let sent = false
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) controller.error(new TypeError('terminated'))
        else controller.enqueue(new TextEncoder().encode(first))
        sent = true
      },
    })
    return new Response(body, { status: 200, headers: { 'content-type': contentType } })
  }
}

function edgeOver(fetch: typeof globalThis.fetch) {
  return createEdgeApp({
    config: async () => demo.snapshot,
    quotas: createMemoryQuotaStore(),
    scorer: createScorerClient({
      urls: ['http://scorer.invalid'],
      signingSecret: 'broken-upstream-signing-secret-0123',
      nowSeconds: () => Date.now() / 1000,
      fetch,
    }),
    external: createExternalProviders({ credentials: () => undefined }),
    metrics: createEdgeMetrics(),
    nowMs: () => Date.now(),
    sleep: async () => {},
    newRequestId: () => 'req-broken',
    log: () => {},
  })
}

const ask = (stream: boolean) =>
  new Request('http://edge/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${demo.demoKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'qwen3.8-27b-fp8',
      messages: [{ role: 'user', content: 'Hello' }],
      max_tokens: 8,
      stream,
    }),
  })

describe('an answer that breaks upstream', () => {
  it('half a JSON body is a 502 upstream_error in OpenAI shape', async () => {
    const app = edgeOver(breakingScorer('application/json', '{"id":"chatcmpl-1","choi'))
    const response = await app.fetch(ask(false))
    expect(response.status).toBe(502)
    expect(((await response.json()) as { error: unknown }).error).toMatchObject({
      code: 'upstream_error',
    })
  })

  it('a stream ends with an error event and [DONE]', async () => {
    const chunk = { choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] }
    const app = edgeOver(breakingScorer('text/event-stream', `data: ${JSON.stringify(chunk)}\n\n`))
    const text = await (await app.fetch(ask(true))).text()
    expect(text).toMatch(/"code":"upstream_error"/)
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
  })
})
