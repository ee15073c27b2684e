import { beforeAll, describe, expect, it } from 'vitest'
import { demoSnapshot } from '../../../control-plane/lab/embedded/demo-snapshot.ts'
import { toConverseRequest } from '../../../shared/bedrock/to-converse-request.ts'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import type { ChatCompletionRequest } from '../../../shared/openai/chat-completion-request.ts'
import { createCacheSalter } from '../../../shared/tenancy/cache-salt.ts'
import { createEdgeMetrics } from '../../../workers/app/edge-metrics.ts'
import { readEdgeRequest } from '../../../workers/app/read-edge-request.ts'
import { scorerBody, withUsage } from '../../../workers/app/upstream-body.ts'

const hash = '0'.repeat(64)
const salter = createCacheSalter('signing-secret-0123456789')
const deps = { cacheSalter: salter }

describe('the body the edge sends the scorer', () => {
  let snapshot: ConfigSnapshot
  beforeAll(async () => {
    // demo is Isolated by default; "open" shares its cache.
    snapshot = await demoSnapshot('http://127.0.0.1:1', 'demo', hash, (resource) => {
      if (resource.kind !== 'InferencePolicy') return
      const demo = resource.spec.tenants[0]
      if (!demo) throw new Error('no demo tenant')
      resource.spec.tenants.push({
        ...structuredClone(demo),
        name: 'open',
        apiKeys: [{ id: 'open', sha256: hash }],
        prefixCache: { sharing: 'Shared' },
      })
    })
  })
  const read = (tenant: string, body: object, text = JSON.stringify(body)) =>
    readEdgeRequest(
      snapshot,
      'chat',
      { tenant, keyId: tenant },
      text,
      undefined,
      createEdgeMetrics(),
    )
  const chat = { model: 'qwen3.8-27b-fp8', messages: [{ role: 'user', content: 'hi' }] }

  it('defaults to Isolated in the compiled snapshot', () => {
    const demo = snapshot.policies['demo/demo']?.spec.tenants.find((t) => t.name === 'demo')
    expect(demo?.prefixCache).toEqual({ sharing: 'Isolated' })
    expect(demo?.quotas?.failureMode).toBe('FailOpen')
  })

  it('asks for a stream with usage on every chunk when the client wants one JSON answer', async () => {
    // So the ledger knows what a client who leaves half-way used (workers/app/answer-upstream.ts).
    const body = JSON.parse(await scorerBody(deps, snapshot, read('demo', chat)))
    expect(body).toMatchObject({
      ...chat,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
      cache_salt: await salter('demo', null),
    })
  })

  it('gives an Isolated tenant its salt, appended to the client bytes it cannot stream', async () => {
    // prompt_logprobs come only in vLLM's unstreamed answer: the request goes as sent.
    const asked = { ...chat, prompt_logprobs: 1 }
    const text = `{ "model": "qwen3.8-27b-fp8", "prompt_logprobs": 1, "messages": [{"role":"user","content":"hi"}] }\n`
    const body = await scorerBody(deps, snapshot, read('demo', asked, text))
    expect(body.startsWith(text.slice(0, 40))).toBe(true)
    expect(JSON.parse(body)).toEqual({ ...asked, cache_salt: await salter('demo', null) })
  })

  it("combines a client's cache_salt with the tenant's instead of sending it", async () => {
    const body = JSON.parse(
      await scorerBody(deps, snapshot, read('demo', { ...chat, cache_salt: 'conversation-1' })),
    )
    expect(body.cache_salt).toBe(await salter('demo', 'conversation-1'))
    expect(body.cache_salt).not.toBe(await salter('demo', null))
    // A null the client sent is replaced too, never left as a duplicate key.
    const nulled = await scorerBody(deps, snapshot, read('demo', { ...chat, cache_salt: null }))
    expect(nulled.match(/cache_salt/g)).toHaveLength(1)
    expect(JSON.parse(nulled).cache_salt).toBe(await salter('demo', null))
  })

  it('salts streams and rewritten models too', async () => {
    const streamed = JSON.parse(
      await scorerBody(deps, snapshot, read('demo', { ...chat, stream: true }), 'qwen3-8b'),
    )
    expect(streamed.model).toBe('qwen3-8b')
    expect(streamed.stream_options).toEqual({ include_usage: true, continuous_usage_stats: true })
    expect(streamed.cache_salt).toBe(await salter('demo', null))
  })

  it("leaves a Shared tenant's bytes, its client's cache_salt included, as sent", async () => {
    const unstreamable = { ...chat, prompt_logprobs: 1 }
    const text = JSON.stringify({ ...unstreamable, cache_salt: 'mine' })
    expect(await scorerBody(deps, snapshot, read('open', {}, text))).toBe(text)
    expect(await scorerBody(deps, snapshot, read('open', unstreamable))).toBe(
      JSON.stringify(unstreamable),
    )
    expect(
      JSON.parse(await scorerBody(deps, snapshot, read('open', { ...chat, cache_salt: 'mine' })))
        .cache_salt,
    ).toBe('mine')
  })

  it('salts with a random key per app when no salter is given, still per tenant', async () => {
    const app = {}
    const first = JSON.parse(await scorerBody(app, snapshot, read('demo', chat))).cache_salt
    expect(JSON.parse(await scorerBody(app, snapshot, read('demo', chat))).cache_salt).toBe(first)
    expect(first).not.toBe(await salter('demo', null))
    expect(JSON.parse(await scorerBody({}, snapshot, read('demo', chat))).cache_salt).not.toBe(
      first,
    )
  })

  it('never sends a cache_salt to Bedrock', () => {
    const request = read('demo', { ...chat, cache_salt: 'client-secret-salt' })
    const converse = toConverseRequest(withUsage(request) as ChatCompletionRequest, {
      modelId: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    })
    expect(JSON.stringify(converse)).not.toContain('client-secret-salt')
    expect(JSON.stringify(converse)).not.toContain('cache_salt')
  })
})
