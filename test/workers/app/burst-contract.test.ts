import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../control-plane/lab/embedded/start-embedded.ts'
import type { KinferenceResource } from '../../../shared/crd/resource.ts'
import { card, client, post, saturatedPool, start } from '../../support/embedded-stack.ts'

/**
 * The local pool saturated, so that the demo's burst rule sends requests to Bedrock first;
 * and "qwen-lenient", the same burst allowed to drop seed.
 */
const patch = (resource: KinferenceResource) => {
  saturatedPool(resource)
  if (resource.kind !== 'InferencePolicy') return
  resource.spec.rules.unshift({
    name: 'lenient-burst',
    match: { models: ['qwen-lenient'] },
    action: {
      burst: {
        local: ['sim-local'],
        external: ['bedrock-claude'],
        whenSaturationAbove: 1,
        dropFields: ['seed'],
      },
    },
  } as (typeof resource.spec.rules)[number])
}

const ask = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'Answer in JSON.' }],
  max_tokens: 4,
  ...extra,
})

/** Fields Bedrock cannot honour, each set as a client would. */
const unhonoured: Record<string, unknown>[] = [
  { seed: 7 },
  {
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'answer', schema: { type: 'object', properties: {} } },
    },
  },
  { logprobs: true, top_logprobs: 2 },
  { n: 2, temperature: 0.7 },
  { reasoning_effort: 'low' },
  {
    parallel_tool_calls: false,
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
  },
]

describe('one contract whatever the backend', () => {
  let stack: EmbeddedStack
  beforeAll(async () => {
    stack = await start({ patch })
  })
  afterAll(() => stack.close())

  it('still bursts a request Bedrock can honour', async () => {
    const before = stack.bedrock.requests.length
    const response = await post(stack, ask('qwen3.8-27b-fp8'))
    expect(response.status).toBe(200)
    expect(response.headers.get('x-kinference-decision')).toContain('backend=demo/bedrock-claude')
    expect(stack.bedrock.requests.length).toBe(before + 1)
  })

  it('serves locally, never on Bedrock, a request Bedrock cannot honour', async () => {
    for (const extra of unhonoured) {
      const before = stack.bedrock.requests.length
      const response = await post(stack, ask('qwen3.8-27b-fp8', extra))
      const field = Object.keys(extra)[0] as string
      expect(response.status, field).toBe(200)
      expect(response.headers.get('x-kinference-decision'), field).toContain(
        'backend=demo/sim-local',
      )
      expect(response.headers.get('x-kinference-fallback'), field).toContain(
        `cannot honour ${field}`,
      )
      expect(stack.bedrock.requests.length, field).toBe(before)
      await response.body?.cancel()
    }
  })

  it('bursts without the fields the policy lets it drop, and only those', async () => {
    const before = stack.bedrock.requests.length
    const dropped = await post(stack, ask('qwen-lenient', { seed: 7 }))
    expect(dropped.status).toBe(200)
    expect(dropped.headers.get('x-kinference-decision')).toContain('backend=demo/bedrock-claude')
    expect(stack.bedrock.requests.length).toBe(before + 1)
    const kept = await post(stack, ask('qwen-lenient', { seed: 7, logprobs: true }))
    expect(kept.status).toBe(200)
    expect(kept.headers.get('x-kinference-decision')).toContain('backend=demo/sim-local')
    expect(stack.bedrock.requests.length).toBe(before + 1)
  })

  it('answers 400 naming the field when only Bedrock serves the model', async () => {
    const error = await client(stack)
      .chat.completions.create(ask('claude-sonnet', { seed: 7 }) as never)
      .then(
        () => null,
        (e: unknown) => e,
      )
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect(error).toMatchObject({ param: 'seed', type: 'invalid_request_error' })
    expect((error as Error).message).toMatch(/seed/)
  })

  it('gives RateLimitError and InternalServerError their OpenAI types and a request id', async () => {
    const openai = client(stack)
    const deferred = await openai.chat.completions
      .create(ask('qwen3.8-27b-fp8') as never, { headers: { 'x-kinference-labels': 'batch' } })
      .then(
        () => null,
        (e: unknown) => e,
      )
    expect(deferred).toBeInstanceOf(OpenAI.RateLimitError)
    expect(deferred).toMatchObject({ type: 'rate_limit_error', code: 'deferred' })
    expect((deferred as InstanceType<typeof OpenAI.APIError>).requestID).toMatch(/\S/)
    const keptLocal = await openai.chat.completions
      .create({ ...ask('qwen3.8-27b-fp8'), messages: [{ role: 'user', content: card }] } as never)
      .then(
        () => null,
        (e: unknown) => e,
      )
    expect(keptLocal).toBeInstanceOf(OpenAI.InternalServerError)
    expect(keptLocal).toMatchObject({ type: 'server_error', code: 'locality_violation' })
    expect((keptLocal as InstanceType<typeof OpenAI.APIError>).requestID).toMatch(/\S/)
  })
})
