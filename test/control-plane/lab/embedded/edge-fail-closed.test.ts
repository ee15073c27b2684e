import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { card, errorOf, post, saturatedPool, start } from '../../../support/embedded-stack.ts'

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
    expect(await (await fetch(`${stack.edge.metricsUrl}/metrics`)).text()).toMatch(
      /^kinference_edge_burst_total\{backend="demo\/bedrock-claude"\} 1(\.0)?$/m,
    )
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
    expect(await (await fetch(`${stack.edge.metricsUrl}/metrics`)).text()).toMatch(
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
      const metrics = await (await fetch(`${stack.edge.metricsUrl}/metrics`)).text()
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
            tenant.quotas = {
              requestsPerMinute: 2,
              tokensPerMinute: 1_000_000,
              failureMode: 'FailOpen',
            }
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
