import type OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { prepareRequest } from '../../../../control-plane/scorer/serving/prepare-request.ts'
import { createCacheSalter } from '../../../../shared/tenancy/cache-salt.ts'
import { client, errorOf, post, start } from '../../../support/embedded-stack.ts'

describe('the edge end to end (simulated pods, scorer, local Bedrock, the openai client)', () => {
  let stack: EmbeddedStack
  beforeAll(async () => {
    stack = await start()
  })
  afterAll(() => stack.close())

  it('answers the openai client without streaming, from a local pod, with usage', async () => {
    const { data, response } = await client(stack)
      .chat.completions.create({
        model: 'qwen3.8-27b-fp8',
        messages: [{ role: 'user', content: 'Hello there' }],
        max_tokens: 8,
        ignore_eos: true,
      } as never)
      .withResponse()
    expect(data.choices[0]?.finish_reason).toBe('length')
    expect(data.usage?.completion_tokens).toBe(8)
    expect(data.usage?.prompt_tokens).toBeGreaterThan(3)
    const decision = response.headers.get('x-kinference-decision') ?? ''
    expect(decision).toContain('rule=local-then-bedrock')
    expect(decision).toContain('locality=InCluster')
    expect(decision).toMatch(/pod=sim-27b-\d/)
  })

  it('streams to the openai client, with usage only when asked for', async () => {
    const stream = await client(stack).chat.completions.create({
      model: 'qwen3.8-27b-fp8',
      messages: [{ role: 'user', content: 'Stream please' }],
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
    } as never)
    let text = ''
    let finish: string | null = null
    let usage: { completion_tokens: number } | null = null
    for await (const chunk of stream as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) {
      text += chunk.choices[0]?.delta.content ?? ''
      finish = chunk.choices[0]?.finish_reason ?? finish
      if (chunk.usage) usage = chunk.usage
    }
    expect(text.length).toBeGreaterThan(0)
    expect(finish).toBe('length')
    expect(usage?.completion_tokens).toBe(6)
    const plain = await post(stack, {
      model: 'qwen3.8-27b-fp8',
      messages: [{ role: 'user', content: 'no usage' }],
      max_tokens: 3,
      stream: true,
    })
    const events = (await plain.text()).split('\n\n').filter(Boolean)
    expect(events.at(-1)).toBe('data: [DONE]')
    expect(events.some((e) => e.includes('"usage":{'))).toBe(false)
  })

  it('serves Bedrock models through the real AWS SDK, streamed and not', async () => {
    const before = stack.bedrock.requests.length
    const full = await client(stack).chat.completions.create({
      model: 'claude-sonnet',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say something about caches' },
      ],
      max_tokens: 200,
    })
    expect(full.choices[0]?.message.content?.length).toBeGreaterThan(0)
    expect(full.choices[0]?.finish_reason).toBe('stop')
    expect(full.usage?.prompt_tokens).toBeGreaterThan(0)
    expect(full.model).toBe('claude-sonnet')
    const stream = await client(stack).chat.completions.create({
      model: 'claude-sonnet',
      messages: [{ role: 'user', content: 'Stream about routing please' }],
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true },
    })
    let finish: string | null = null
    let usage: OpenAI.CompletionUsage | null = null
    for await (const chunk of stream) {
      finish = chunk.choices[0]?.finish_reason ?? finish
      if (chunk.usage) usage = chunk.usage
    }
    expect(finish).toBe('length')
    expect(usage?.completion_tokens).toBe(3)
    expect(stack.bedrock.requests.length).toBe(before + 2)
  })

  it('rewrites an alias and lists the tenant’s models', async () => {
    const response = await post(stack, {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'alias' }],
      max_tokens: 2,
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-kinference-decision')).toContain('model=qwen3.8-27b-fp8')
    const models = await client(stack).models.list()
    expect(models.data.map((m) => m.id)).toEqual(
      expect.arrayContaining(['claude-sonnet', 'gpt-4o', 'qwen3.8-27b-fp8']),
    )
  })

  it('serves "auto" from the cheaper pool unless the bigger one holds the prefix and is predicted faster', async () => {
    const system = (seed: string) => Array.from({ length: 1500 }, (_, i) => `${seed}${i}`).join(' ')
    const ask = (model: string, prefix: string, question: string) =>
      post(stack, {
        model,
        messages: [
          { role: 'system', content: prefix },
          { role: 'user', content: question },
        ],
        max_tokens: 2,
      })
    const decision = (response: Response) => response.headers.get('x-kinference-decision') ?? ''
    const cold = await ask('auto', system('a'), 'first')
    expect(cold.status).toBe(200)
    expect(decision(cold)).toContain('rule=auto-cheaper-unless-cached')
    expect(decision(cold)).toContain('backend=demo/sim-small-local')
    // Warm only the big pool with another system prompt, wait until the scorer's index
    // has its blocks (KV events arrive asynchronously), then "auto" goes there.
    const warmPrefix = system('b')
    expect((await ask('qwen3.8-27b-fp8', warmPrefix, 'warm the big pool')).status).toBe(200)
    const big = stack.scorer.pools.find((pool) => pool.name === 'sim-27b')
    if (!big) throw new Error('no sim-27b pool')
    const prepared = prepareRequest(
      'probe',
      'chat',
      {
        model: 'qwen3.8-27b-fp8',
        messages: [
          { role: 'system', content: warmPrefix },
          { role: 'user', content: 'x' },
        ],
        // The demo tenant's prefix cache is Isolated: its blocks carry its salt.
        cache_salt: await createCacheSalter(stack.signingSecret)('demo', null),
      },
      [big],
    )
    for (let i = 0; i < 200; i++) {
      const lookup = await big.router.lookup(prepared.request)
      if (Math.max(...lookup.blocks.values()) * 16 > 1000) break
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    const warm = await ask('auto', warmPrefix, 'now')
    expect(decision(warm)).toContain('backend=demo/sim-local;')
    expect(decision(warm)).toMatch(/matched_tokens=[1-9]\d{3}/)
  })

  it('runs batch work at once while the pool is idle', async () => {
    const response = await post(
      stack,
      {
        model: 'qwen3.8-27b-fp8',
        messages: [{ role: 'user', content: 'batch job' }],
        max_tokens: 2,
      },
      { 'x-kinference-labels': 'batch' },
    )
    expect(response.status).toBe(200)
    expect(response.headers.get('x-kinference-decision')).toContain('rule=batch-on-idle')
  })

  it('rejects prompts over the policy’s length limit with its status and code', async () => {
    // About 23,000 tokens: over the rule's 16,000, within the model's 32,768 (past that the
    // edge answers context_length_exceeded before any rule).
    const long = Array.from({ length: 8_000 }, (_, i) => `w${i % 97}`).join(' ')
    const response = await post(stack, {
      model: 'qwen3.8-27b-fp8',
      messages: [{ role: 'user', content: long }],
    })
    expect(response.status).toBe(413)
    expect((await errorOf(response)).code).toBe('prompt_too_long')
  })

  it('refuses bad keys with 401 and malformed requests with 400, in OpenAI’s shape', async () => {
    await expect(
      client(stack, 'kinf_demo_wrongsecretwrongsecret0000').models.list(),
    ).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' })
    const noKey = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      body: '{}',
    })
    expect(noKey.status).toBe(401)
    const notJson = await post(stack, '{"model":')
    expect(notJson.status).toBe(400)
    expect((await errorOf(notJson)).type).toBe('invalid_request_error')
    const noMessages = await post(stack, { model: 'qwen3.8-27b-fp8' })
    expect(noMessages.status).toBe(400)
    expect((await errorOf(noMessages)).param).toBe('messages')
    const badLabel = await post(
      stack,
      { model: 'qwen3.8-27b-fp8', messages: [{ role: 'user', content: 'x' }] },
      { 'x-kinference-labels': 'Not A Label!' },
    )
    expect(badLabel.status).toBe(400)
    const unknownModel = await post(stack, {
      model: 'no-such-model',
      messages: [{ role: 'user', content: 'x' }],
    })
    expect(unknownModel.status).toBe(404)
    const tooBig = await post(stack, 'x'.repeat(9 * 1024 * 1024))
    expect(tooBig.status).toBe(413)
    for (const hostile of [
      'null',
      '[]',
      '"x"',
      '{"model":1,"messages":"no"}',
      '{"model":"m","messages":[{"role":"robot"}]}',
    ]) {
      const answer = await post(stack, hostile)
      expect(answer.status, hostile).toBe(400)
      expect((await errorOf(answer)).type).toBe('invalid_request_error')
    }
    const notUtf8 = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.demoKey}` },
      body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    })
    expect(notUtf8.status).toBe(400)
    const health = await fetch(`${stack.edge.url}/healthz`)
    expect(health.status).toBe(200)
  })
})
