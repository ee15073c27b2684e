import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { card, client, start, thrown } from '../../../support/embedded-stack.ts'

// /v1/embeddings through the stack `npm start` runs (edge, scorer, the demo's pooling pool of
// simulated vLLM pods), with the official client. The simulator stands in for vLLM's pooling
// runner with its own tokenizer and its own engine (control-plane/lab/sim), so the usage it
// reports is an independent count of what the pod ran.

const model = 'qwen3-embedding-0.6b'

const norm = (vector: readonly number[]) => Math.hypot(...vector)

describe('embeddings through the embedded stack', () => {
  let stack: EmbeddedStack
  let openai: OpenAI
  beforeAll(async () => {
    stack = await start()
    openai = client(stack)
  })
  afterAll(() => stack.close())

  it('embeds a text and a batch with the official client (base64, decoded by it) and as floats', async () => {
    const one = await openai.embeddings.create({ model, input: 'The quick brown fox.' })
    expect(one.object).toBe('list')
    expect(one.model).toBe(model)
    expect(one.data).toHaveLength(1)
    const [vector] = one.data.map((d) => d.embedding)
    expect(norm(vector ?? [])).toBeCloseTo(1, 4)
    const batch = await openai.embeddings.create({
      model,
      input: ['The quick brown fox.', 'A different sentence entirely.'],
      encoding_format: 'float',
    })
    expect(batch.data.map((d) => d.index)).toEqual([0, 1])
    // The same text gets the same vector, whichever pod embedded it and however it was sent.
    expect(batch.data[0]?.embedding).toEqual(vector?.map((x) => Math.fround(x)))
    expect(batch.data[1]?.embedding).not.toEqual(batch.data[0]?.embedding)
    expect(batch.usage.prompt_tokens).toBeGreaterThan(one.usage.prompt_tokens)
    expect(batch.usage.total_tokens).toBe(batch.usage.prompt_tokens)
  })

  it('counts the prompt as the pod did: the scorer’s tokenizer agrees with the simulated pod’s', async () => {
    const response = await fetch(`${stack.edge.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.demoKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, input: ['Hello there, world.', 'Zwei Sätze, bitte.'] }),
    })
    expect(response.status).toBe(200)
    const body = (await response.json()) as { usage: { prompt_tokens: number } }
    // The demo tenant sees the routing headers: the scorer's own count, and the pool it chose.
    expect(Number(response.headers.get('x-kinference-prompt-tokens'))).toBe(
      body.usage.prompt_tokens,
    )
    expect(response.headers.get('x-kinference-decision')).toMatch(
      /rule=embeddings-in-cluster;.*backend=demo\/sim-embed-local;.*pool=sim-embed; pod=sim-embed-/,
    )
    expect(response.headers.get('x-request-id')).toMatch(/\S/)
    expect(response.headers.get('x-ratelimit-remaining-requests')).toMatch(/^\d+$/)
  })

  it('keeps personal data in the cluster: served by the pool, never refused for it', async () => {
    const answer = await openai.embeddings.create({ model, input: card })
    expect(answer.data).toHaveLength(1)
  })

  it('answers a request for the wrong API, or a model no pool embeds, with a 400 in OpenAI’s shape', async () => {
    // Each call made only when its turn comes: a refusal nobody awaits yet is unhandled.
    const cases: [() => Promise<unknown>, string][] = [
      [
        () =>
          openai.chat.completions.create({
            model,
            messages: [{ role: 'user', content: 'hi' }],
            max_tokens: 2,
          }),
        'model_not_supported',
      ],
      [
        () => openai.embeddings.create({ model: 'qwen3.8-27b-fp8', input: 'hi' }),
        'model_not_supported',
      ],
      [
        () => openai.embeddings.create({ model: 'claude-sonnet', input: 'hi' }),
        'model_not_supported',
      ],
      [() => openai.embeddings.create({ model, input: [] }), 'invalid_request'],
    ]
    for (const [call, code] of cases) {
      const error = await thrown(call())
      expect(error).toBeInstanceOf(OpenAI.BadRequestError)
      expect(error).toMatchObject({ type: 'invalid_request_error', code })
      expect(error.requestID).toMatch(/\S/)
    }
    const unknown = await thrown(openai.embeddings.create({ model: 'no-such-model', input: 'x' }))
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError)
    expect(unknown).toMatchObject({ code: 'model_not_found' })
  })

  it('counts embeddings in the per-tenant, per-model series', async () => {
    const metrics = await (await fetch(`${stack.edge.metricsUrl}/metrics`)).text()
    expect(metrics).toMatch(
      /kinference_edge_prompt_tokens_total\{[^}]*model="qwen3-embedding-0\.6b"[^}]*\} [1-9]/,
    )
  })
})
