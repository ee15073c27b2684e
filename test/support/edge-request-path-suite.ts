import { describe, expect, it } from 'vitest'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { CustomPiiPattern } from '../../shared/pii/custom-pii-patterns.ts'
import type { QuotaStore } from '../../shared/quota/quota-store.ts'
import { createEdgeApp } from '../../workers/app/edge-app.ts'
import type { EdgeDeps } from '../../workers/app/edge-deps.ts'
import { createEdgeMetrics } from '../../workers/app/edge-metrics.ts'
import { createExternalProviders } from '../../workers/app/external-providers.ts'
import { createScorerClient } from '../../workers/app/scorer-client.ts'
import { cloudflareClientAddress } from '../../workers/worker/cloudflare-client-address.ts'
import type { RequestPathStack } from './request-path-stack.ts'

export interface RequestPathRuntime {
  stack: () => RequestPathStack
  /** A fresh quota store of the runtime's kind (Durable Objects in workerd, memory in Node). */
  quotas: () => QuotaStore
}

const card = 'My card is 4111 1111 1111 1111, please book the flight.'

/**
 * The edge's request path, the same cases in workerd and in Node: the app built from the
 * runtime's ports, against real simulated pods behind the scorer and the local Bedrock
 * stand-in (reached through the real AWS SDK).
 */
export function describeEdgeRequestPath(runtime: string, setup: RequestPathRuntime): void {
  const edge = (
    options: {
      saturated?: boolean
      requestsPerMinute?: number
      limits?: EdgeDeps['limits']
      piiPatterns?: CustomPiiPattern[]
    } = {},
  ) => {
    const { piiPatterns } = options
    const stack = setup.stack()
    const snapshot = JSON.parse(stack.snapshot) as ConfigSnapshot
    if (options.requestsPerMinute !== undefined)
      for (const policy of Object.values(snapshot.policies))
        for (const tenant of policy.spec.tenants)
          tenant.quotas = { requestsPerMinute: options.requestsPerMinute, failureMode: 'FailOpen' }
    if (piiPatterns)
      for (const policy of Object.values(snapshot.policies))
        policy.spec.pii = { ...policy.spec.pii, patterns: piiPatterns }
    const app = createEdgeApp({
      config: async () => snapshot,
      quotas: setup.quotas(),
      scorer: createScorerClient({
        urls: [options.saturated ? stack.saturatedScorerUrl : stack.scorerUrl],
        signingSecret: stack.signingSecret,
        nowSeconds: () => Date.now() / 1000,
        fetch: (input, init) => fetch(input, init),
      }),
      external: createExternalProviders({
        credentials: () => ({ accessKeyId: 'AKIATESTTESTTEST0000', secretAccessKey: 'test' }),
      }),
      metrics: createEdgeMetrics(),
      nowMs: () => Date.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      newRequestId: () => crypto.randomUUID(),
      log: () => {},
      clientAddress: cloudflareClientAddress,
      ...(options.limits ? { limits: options.limits } : {}),
    })
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      app.fetch(
        new Request('http://edge/v1/chat/completions', {
          method: 'POST',
          headers: { authorization: `Bearer ${stack.demoKey}`, ...headers },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        }),
      )
    return { app, post }
  }
  const bedrockCalls = async () =>
    (
      (await (await fetch(`${setup.stack().bedrockUrl}/__fake/requests`)).json()) as {
        count: number
      }
    ).count
  /** Requests the scorer saw end because the edge went away, over its pods. */
  const clientGone = async () => {
    const text = await (await fetch(`${setup.stack().scorerMetricsUrl}/metrics`)).text()
    let count = 0
    for (const line of text.split('\n'))
      if (line.startsWith('kinference_scorer_requests') && line.includes('outcome="client-gone"'))
        count += Number(line.slice(line.lastIndexOf(' ') + 1))
    return count
  }
  const errorOf = async (response: Response) =>
    ((await response.json()) as { error: { code: string; type: string; param: unknown } }).error
  const chat = (content: string, extra: object = {}) => ({
    model: 'qwen3.8-27b-fp8',
    messages: [{ role: 'user', content }],
    max_tokens: 4,
    ...extra,
  })

  describe(`the edge's request path (${runtime})`, () => {
    it('serves a local pod, with usage and the decision header', async () => {
      const response = await edge().post(chat('hello', { ignore_eos: true }))
      expect(response.status).toBe(200)
      const body = (await response.json()) as {
        choices: { finish_reason: string }[]
        usage: { completion_tokens: number }
      }
      expect(body.choices[0]?.finish_reason).toBe('length')
      expect(body.usage.completion_tokens).toBe(4)
      expect(response.headers.get('x-kinference-decision')).toMatch(/backend=demo\/sim-local.*pod=/)
    })

    it('serves embeddings from the pooling pool, charged on its usage, never from Bedrock', async () => {
      const before = await bedrockCalls()
      const { app } = edge()
      const embed = (body: unknown) =>
        app.fetch(
          new Request('http://edge/v1/embeddings', {
            method: 'POST',
            headers: { authorization: `Bearer ${setup.stack().demoKey}` },
            body: JSON.stringify(body),
          }),
        )
      const response = await embed({ model: 'qwen3-embedding-0.6b', input: ['one', 'two'] })
      expect(response.status).toBe(200)
      const body = (await response.json()) as {
        data: { index: number; embedding: number[] }[]
        usage: { prompt_tokens: number }
      }
      expect(body.data.map((d) => d.index)).toEqual([0, 1])
      expect(Math.hypot(...(body.data[0]?.embedding ?? []))).toBeCloseTo(1, 4)
      expect(body.usage.prompt_tokens).toBeGreaterThan(0)
      expect(response.headers.get('x-kinference-decision')).toMatch(/backend=demo\/sim-embed-local/)
      const external = await embed({ model: 'claude-sonnet', input: 'hi' })
      expect(external.status).toBe(400)
      expect((await errorOf(external)).code).toBe('model_not_supported')
      expect(await bedrockCalls()).toBe(before)
    })

    it('streams from a local pod with usage when asked', async () => {
      const response = await edge().post(
        chat('stream', { stream: true, stream_options: { include_usage: true }, ignore_eos: true }),
      )
      const text = await response.text()
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
      expect(text).toContain('"completion_tokens":4')
    })

    it('serves Bedrock models through the AWS SDK, streamed and not', async () => {
      const before = await bedrockCalls()
      const { post } = edge()
      const full = await post({
        model: 'claude-sonnet',
        messages: [{ role: 'user', content: 'hi there' }],
      })
      expect(full.status).toBe(200)
      const body = (await full.json()) as { model: string; choices: { finish_reason: string }[] }
      expect(body.model).toBe('claude-sonnet')
      expect(body.choices[0]?.finish_reason).toBe('stop')
      const streamed = await post({
        model: 'claude-sonnet',
        messages: [{ role: 'user', content: 'one two three four five' }],
        max_tokens: 2,
        stream: true,
      })
      const events = await streamed.text()
      expect(events).toContain('"finish_reason":"length"')
      expect(events.trimEnd().endsWith('data: [DONE]')).toBe(true)
      expect(await bedrockCalls()).toBe(before + 2)
    })

    it('refuses bad keys, bad JSON and unknown models in OpenAI’s shape', async () => {
      const { app, post } = edge()
      const bad = await app.fetch(
        new Request('http://edge/v1/models', {
          headers: { authorization: 'Bearer kinf_demo_nope' },
        }),
      )
      expect(bad.status).toBe(401)
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key')
      expect((await post('{"model":')).status).toBe(400)
      expect((await post(chat('x', { model: 'unknown-model' }))).status).toBe(404)
    })

    it('answers hostile bodies with a 400 at once: deep nesting, malformed tools', async () => {
      const { post } = edge()
      const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`
      const hostile = [
        [
          `{"model":"qwen3.8-27b-fp8","messages":[{"role":"user","content":${deep}}]}`,
          'messages.0.content',
        ],
        [deep, null],
        [chat('x', { tools: [{ type: 'function', function: 7 }] }), 'tools.0.function'],
      ] as const
      for (const [body, param] of hostile) {
        const response = await post(body)
        expect(response.status).toBe(400)
        const { error } = (await response.json()) as { error: { code: string; param: unknown } }
        expect(error).toMatchObject({ code: 'invalid_request', param })
      }
    })

    it('answers repeated failed authentications with 429, per address and per key id', async () => {
      const { app, post } = edge()
      const { demoKey } = setup.stack()
      const models = (key: string, address?: string) =>
        app.fetch(
          new Request('http://edge/v1/models', {
            headers: {
              authorization: `Bearer ${key}`,
              ...(address ? { 'cf-connecting-ip': address } : {}),
            },
          }),
        )
      // 20 wrong secrets from one address: 401s; the 20th crosses the limit.
      const statuses = []
      for (let i = 0; i < 21; i++)
        statuses.push((await models(`kinf_guess${i}_${'x'.repeat(32)}`, '198.51.100.7')).status)
      expect(statuses.slice(0, 19).every((s) => s === 401)).toBe(true)
      expect(statuses.slice(19)).toEqual([429, 429])
      // That address is refused before its key is looked at, even a good one.
      const refused = await models(demoKey, '198.51.100.7')
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      // Another address is not.
      expect((await models(demoKey, '198.51.100.8')).status).toBe(200)
      // Guesses at one key id from many addresses: 429s, but its owner's key still works.
      const [, id] = demoKey.split('_')
      for (let i = 0; i < 21; i++) await models(`kinf_${id}_${'y'.repeat(32)}`, `203.0.113.${i}`)
      expect((await models(`kinf_${id}_${'y'.repeat(32)}`, '203.0.113.99')).status).toBe(429)
      expect((await post(chat('still mine'))).status).toBe(200)
    })

    it('bursts to Bedrock when the pool is saturated, but never with PII', async () => {
      const { post } = edge({ saturated: true })
      const before = await bedrockCalls()
      const burst = await post(chat('ordinary question'))
      expect(burst.status).toBe(200)
      expect(burst.headers.get('x-kinference-decision')).toContain('backend=demo/bedrock-claude')
      expect(await bedrockCalls()).toBe(before + 1)
      const pii = await post(chat(card))
      expect(pii.status).toBe(503)
      expect(((await pii.json()) as { error: { code: string } }).error.code).toBe(
        'locality_violation',
      )
      expect(await bedrockCalls()).toBe(before + 1)
    })

    it('answers 429 with Retry-After past the tenant’s request quota', async () => {
      const { post } = edge({ requestsPerMinute: 1 })
      const first = await post(chat('first'))
      expect(first.status).toBe(200)
      // What is left, as OpenAI's headers say it: read back from the store that admitted it.
      expect(first.headers.get('x-ratelimit-limit-requests')).toBe('1')
      expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('0')
      const refused = await post(chat('second'))
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0')
      expect(refused.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+[hm])*\d+m?s$/)
    })

    it('matches custom PII patterns in linear time: a match stays local, a near miss bursts', async () => {
      const { post } = edge({
        saturated: true,
        piiPatterns: [
          { name: 'employee', regex: '\\bEMP-\\d{6}\\b', label: 'pii:employee-id' },
          { name: 'pathological', regex: '(a|a)*b', label: 'pii:pathological' },
        ],
      })
      const employee = await post(chat('ticket for EMP-123456 please'))
      expect(employee.status).toBe(503)
      expect((await errorOf(employee)).code).toBe('locality_violation')
      // 30,000 near misses of (a|a)*b: exponential for a backtracking matcher.
      const nearMiss = await post(chat('a'.repeat(30_000)))
      expect(nearMiss.status).toBe(200)
      expect(nearMiss.headers.get('x-kinference-decision')).toContain('backend=demo/bedrock-claude')
      expect((await post(chat(`${'a'.repeat(30_000)}b`))).status).toBe(503)
    })

    it('answers oversized headers with 431 in OpenAI’s shape', async () => {
      const { post } = edge()
      const big = await post(chat('x'), { 'x-filler': 'f'.repeat(40 * 1024) })
      expect(big.status).toBe(431)
      expect(await errorOf(big)).toMatchObject({
        code: 'request_header_fields_too_large',
        type: 'invalid_request_error',
      })
      expect((await post(chat('x'), { 'x-filler': 'f'.repeat(16 * 1024) })).status).toBe(200)
    })

    it('refuses too many messages, tools and stop sequences, and an unbounded max_tokens', async () => {
      const { post } = edge()
      const message = { role: 'user', content: 'hi' }
      const tool = { type: 'function', function: { name: 'f' } }
      const cases = [
        [chat('x', { messages: Array.from({ length: 2_049 }, () => message) }), 'messages'],
        [chat('x', { tools: Array.from({ length: 129 }, () => tool) }), 'tools'],
        [chat('x', { stop: Array.from({ length: 17 }, (_, i) => `s${i}`) }), 'stop'],
        [chat('x', { max_tokens: 200_000 }), 'max_tokens'],
        [chat('x', { max_tokens: 0 }), 'max_tokens'],
        [chat('x', { max_completion_tokens: -1 }), 'max_completion_tokens'],
      ] as const
      for (const [body, param] of cases) {
        const response = await post(body)
        expect(response.status, param).toBe(400)
        expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', param })
      }
      const many = chat('x', { messages: Array.from({ length: 2_048 }, () => message) })
      expect((await post(many)).status).toBe(200)
    })

    it('answers context_length_exceeded past the model’s context or the default bound', async () => {
      const { post } = edge({ limits: { maxRequestTokens: 1_000 } })
      // The pool serves qwen3.8-27b-fp8 with maxContextTokens 32768.
      const long = await post(chat('word '.repeat(20_000), { max_tokens: 20_000 }))
      expect(long.status).toBe(400)
      expect(await errorOf(long)).toMatchObject({
        code: 'context_length_exceeded',
        type: 'invalid_request_error',
        param: 'messages',
      })
      expect((await post(chat('word '.repeat(2_000), { max_tokens: 4 }))).status).toBe(200)
      // A model no pool serves (Bedrock's) is held to maxRequestTokens.
      const claude = await post({
        model: 'claude-sonnet',
        messages: [{ role: 'user', content: 'word '.repeat(2_000) }],
      })
      expect(claude.status).toBe(400)
      expect((await errorOf(claude)).code).toBe('context_length_exceeded')
    })

    it('ends a stream past maxStreamSeconds with an error event and [DONE], cancelling upstream', async () => {
      const { post } = edge({ limits: { maxStreamSeconds: 1 } })
      const before = await clientGone()
      const response = await post(
        chat('a long answer', { stream: true, ignore_eos: true, max_tokens: 30_000 }),
      )
      expect(response.status).toBe(200)
      const text = await response.text()
      const events = text.trimEnd().split('\n\n')
      expect(events.at(-1)).toBe('data: [DONE]')
      const error = JSON.parse((events.at(-2) ?? '').slice('data: '.length)) as {
        error: { code: string; type: string }
      }
      expect(error.error).toMatchObject({ code: 'stream_duration_exceeded', type: 'server_error' })
      expect(text).not.toContain('"finish_reason":"length"')
      // The scorer sees the edge leave and stops the pod's request.
      await expect.poll(clientGone, { timeout: 10_000 }).toBeGreaterThan(before)
    })
  })
}
