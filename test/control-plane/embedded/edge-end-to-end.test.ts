import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type EmbeddedStack,
  startEmbedded,
} from '../../../control-plane/embedded/start-embedded.ts'
import { signEdgeRequest } from '../../../shared/auth/edge-signature.ts'
import type { KinferenceResource } from '../../../shared/crd/resource.ts'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import {
  type PoolEstimateResponse,
  poolEstimatePath,
} from '../../../shared/scorer-api/pool-estimate.ts'

const card = 'Please charge my card 4111 1111 1111 1111 for the order.'

async function start(options: Partial<Parameters<typeof startEmbedded>[0]> = {}) {
  return startEmbedded({
    port: 0,
    pods: 2,
    timeScale: 50,
    quotas: createMemoryQuotaStore(),
    redisUrl: null,
    log: () => {},
    ...options,
  })
}

const client = (stack: EmbeddedStack, key = stack.demoKey) =>
  new OpenAI({ baseURL: `${stack.edge.url}/v1`, apiKey: key, maxRetries: 0 })

const post = (stack: EmbeddedStack, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${stack.edge.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.demoKey}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })

const errorOf = async (response: Response) =>
  (
    (await response.json()) as {
      error: { message: string; type: string; code: string; param: string | null }
    }
  ).error

const saturatedPool = (resource: KinferenceResource) => {
  if (resource.kind === 'InferencePool') resource.spec.ttftSloMs = 0.001
  if (resource.kind === 'InferencePolicy')
    for (const rule of resource.spec.rules)
      if (rule.action.deferUntilIdle) rule.action.deferUntilIdle.maxWaitMs = 0
}

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
    const estimate = JSON.stringify({
      kind: 'chat',
      body: {
        messages: [
          { role: 'system', content: warmPrefix },
          { role: 'user', content: 'x' },
        ],
      },
      targets: [{ pool: 'sim-27b', model: 'qwen3.8-27b-fp8' }],
    })
    for (let i = 0; i < 200; i++) {
      const signed = await signEdgeRequest(
        stack.signingSecret,
        { method: 'POST', path: poolEstimatePath, body: estimate },
        { tenant: 'demo', labels: [], backends: [], allowBurst: false },
        Date.now() / 1000,
      )
      const answer = (await (
        await fetch(`${stack.scorer.url}${poolEstimatePath}`, {
          method: 'POST',
          headers: signed,
          body: estimate,
        })
      ).json()) as PoolEstimateResponse
      if ((answer.results[0]?.estimate?.matchedTokens ?? 0) > 1000) break
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
    const long = Array.from({ length: 17_000 }, (_, i) => `w${i % 97}`).join(' ')
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

describe('the edge when the local pool is saturated', () => {
  let stack: EmbeddedStack
  beforeAll(async () => {
    stack = await start({ patch: saturatedPool })
  })
  afterAll(() => stack.close())

  it('bursts ordinary requests to Bedrock', async () => {
    const before = stack.bedrock.requests.length
    const response = await post(stack, {
      model: 'qwen3.8-27b-fp8',
      messages: [{ role: 'user', content: 'burst me' }],
      max_tokens: 5,
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-kinference-decision')).toContain('backend=demo/bedrock-claude')
    expect(stack.bedrock.requests.length).toBe(before + 1)
  })

  it('keeps PII local and answers with the constraint’s error instead', async () => {
    const before = stack.bedrock.requests.length
    const response = await post(stack, {
      model: 'qwen3.8-27b-fp8',
      messages: [{ role: 'user', content: card }],
      max_tokens: 5,
    })
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).not.toBeNull()
    const error = await errorOf(response)
    expect(error.code).toBe('locality_violation')
    expect(error.message).toContain('personal data')
    expect(stack.bedrock.requests.length).toBe(before)
    expect(await (await fetch(`${stack.edge.url}/metrics`)).text()).toMatch(
      /kinference_edge_pii_kept_local_total\{constraint="pii-in-cluster"\} [1-9]/,
    )
  })

  it('keeps client-labelled requests local too', async () => {
    const before = stack.bedrock.requests.length
    const response = await post(
      stack,
      { model: 'qwen3.8-27b-fp8', messages: [{ role: 'user', content: 'clean text' }] },
      { 'x-kinference-labels': 'pii:medical' },
    )
    expect(response.status).toBe(503)
    expect(stack.bedrock.requests.length).toBe(before)
  })

  it('defers batch work with 429 and Retry-After while the pool is busy', async () => {
    const response = await post(
      stack,
      { model: 'qwen3.8-27b-fp8', messages: [{ role: 'user', content: 'batch job' }] },
      { 'x-kinference-labels': 'batch' },
    )
    expect(response.status).toBe(429)
    expect(response.headers.get('retry-after')).toBe('30')
  })

  it('keeps PII local when the scorer is unreachable, and bursts the rest', async () => {
    await stack.scorer.close()
    const before = stack.bedrock.requests.length
    const pii = await post(stack, {
      model: 'qwen3.8-27b-fp8',
      messages: [{ role: 'user', content: card }],
    })
    expect(pii.status).toBe(503)
    expect((await errorOf(pii)).code).toBe('locality_violation')
    expect(stack.bedrock.requests.length).toBe(before)
    const plain = await post(stack, {
      model: 'qwen3.8-27b-fp8',
      messages: [{ role: 'user', content: 'no personal data here' }],
      max_tokens: 4,
    })
    expect(plain.status).toBe(200)
    expect(stack.bedrock.requests.length).toBe(before + 1)
  })
})

describe('the edge fails closed', () => {
  it('treats a request whose detector threw as PII: never external', async () => {
    const stack = await start({
      patch: saturatedPool,
      detectPii: () => {
        throw new Error('detector crashed')
      },
    })
    try {
      const response = await post(stack, {
        model: 'qwen3.8-27b-fp8',
        messages: [{ role: 'user', content: 'nothing personal' }],
      })
      expect(response.status).toBe(503)
      expect(stack.bedrock.requests.length).toBe(0)
      const metrics = await (await fetch(`${stack.edge.url}/metrics`)).text()
      expect(metrics).toMatch(/kinference_edge_pii_detector_failures_total 1/)
    } finally {
      await stack.close()
    }
  })

  it('rejects by tenant with the rule’s status and code', async () => {
    const stack = await start({
      patch: (resource) => {
        if (resource.kind === 'InferencePolicy')
          resource.spec.rules.unshift({
            name: 'demo-not-on-bedrock',
            match: { tenants: ['demo'], models: ['claude-sonnet'] },
            action: { reject: { status: 403, code: 'tenant_not_allowed', message: 'not for you' } },
          })
      },
    })
    try {
      const response = await post(stack, {
        model: 'claude-sonnet',
        messages: [{ role: 'user', content: 'hi' }],
      })
      expect(response.status).toBe(403)
      const error = await errorOf(response)
      expect(error.code).toBe('tenant_not_allowed')
      expect(error.type).toBe('permission_error')
      expect(stack.bedrock.requests.length).toBe(0)
    } finally {
      await stack.close()
    }
  })

  it('stops bursting when the provider’s account limit is reached, and serves locally instead', async () => {
    const stack = await start({
      patch: (resource) => {
        saturatedPool(resource)
        if (resource.kind === 'InferenceProvider') resource.spec.limits = { requestsPerMinute: 1 }
      },
    })
    try {
      const ask = (model: string) =>
        post(stack, { model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 2 })
      const burst = await ask('qwen3.8-27b-fp8')
      expect(burst.headers.get('x-kinference-decision')).toContain('backend=demo/bedrock-claude')
      // The account's one request this minute is spent: the saturated local pool queues it.
      const local = await ask('qwen3.8-27b-fp8')
      expect(local.status).toBe(200)
      expect(local.headers.get('x-kinference-decision')).toContain('backend=demo/sim-local')
      expect(local.headers.get('x-kinference-fallback')).toContain(
        'provider requests limit reached',
      )
      // A rule with Bedrock only: 429 with the provider's Retry-After.
      const refused = await ask('claude-sonnet')
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect((await errorOf(refused)).code).toBe('provider_limit')
      expect(stack.bedrock.requests.length).toBe(1)
    } finally {
      await stack.close()
    }
  })

  it('answers 429 with Retry-After once the tenant’s request quota is spent', async () => {
    const stack = await start({
      patch: (resource) => {
        if (resource.kind === 'InferencePolicy')
          for (const tenant of resource.spec.tenants)
            tenant.quotas = { requestsPerMinute: 2, tokensPerMinute: 1_000_000 }
      },
    })
    try {
      const ask = () =>
        post(stack, {
          model: 'qwen3.8-27b-fp8',
          messages: [{ role: 'user', content: 'q' }],
          max_tokens: 1,
        })
      expect((await ask()).status).toBe(200)
      expect((await ask()).status).toBe(200)
      const refused = await ask()
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect((await errorOf(refused)).type).toBe('rate_limit_error')
    } finally {
      await stack.close()
    }
  })
})
