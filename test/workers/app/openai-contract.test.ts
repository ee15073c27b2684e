import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../control-plane/lab/embedded/start-embedded.ts'
import type { KinferenceResource } from '../../../shared/crd/resource.ts'
import { client, start, thrown } from '../../support/embedded-stack.ts'

/** The demo policy, with a model refused with 403 and one vLLM-only field allowed. */
const patch = (resource: KinferenceResource) => {
  if (resource.kind !== 'InferencePolicy') return
  resource.spec.rules.unshift({
    name: 'secret-model',
    match: { models: ['secret-model'] },
    action: { reject: { status: 403, message: 'not for this tenant', code: 'model_forbidden' } },
  } as (typeof resource.spec.rules)[number])
  for (const tenant of resource.spec.tenants) tenant.vllmFields = ['mm_processor_kwargs']
}

const chat = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user' as const, content: 'Say hi.' }],
  max_tokens: 2,
  ...extra,
})

/** The demo's embedding model (its pool runs vLLM's pooling runner). */
const embeddingModel = 'qwen3-embedding-0.6b'

const goDuration = /^(\d+ms|(\d+h)?(\d+m)?\d+s)$/

describe('the edge’s OpenAI contract, through the official client', () => {
  let stack: EmbeddedStack
  let openai: OpenAI
  beforeAll(async () => {
    stack = await start({ patch })
    openai = client(stack)
  })
  afterAll(() => stack.close())

  it('lists only models the policy serves, each retrievable and served', async () => {
    const ids = (await openai.models.list()).data.map((m) => m.id)
    expect(ids).toContain('qwen3.8-27b-fp8')
    // The "auto" rule's pools serve qwen3-8b only under "auto"; the 403 rule serves nothing.
    expect(ids).not.toContain('qwen3-8b')
    expect(ids).not.toContain('secret-model')
    // The pooling pool's model answers embeddings; chat for it is the client's error.
    expect(ids).toContain(embeddingModel)
    for (const id of ids) {
      expect((await openai.models.retrieve(id)).id).toBe(id)
      if (id === embeddingModel) {
        const answer = await openai.embeddings.create({ model: id, input: 'Say hi.' })
        expect(answer.data[0]?.embedding.length).toBeGreaterThan(0)
        continue
      }
      const answer = await openai.chat.completions.create(chat(id))
      expect(answer.choices.length).toBeGreaterThan(0)
    }
  })

  it('answers an unknown model 404 model_not_found in OpenAI’s words', async () => {
    for (const call of [
      openai.models.retrieve('qwen3-8b'),
      openai.chat.completions.create(chat('qwen3-8b')),
      openai.chat.completions.create(chat('no-such-model')),
    ]) {
      const error = await thrown(call)
      expect(error).toBeInstanceOf(OpenAI.NotFoundError)
      expect(error).toMatchObject({
        type: 'invalid_request_error',
        code: 'model_not_found',
        param: 'model',
      })
      expect(error.message).not.toMatch(/policy|rule|demo\//)
      expect(error.requestID).toMatch(/\S/)
    }
  })

  it('gives every error class its status, type and string code, with a request id', async () => {
    const cases: [Promise<unknown>, new (...args: never[]) => unknown, string, string][] = [
      [
        client(stack, 'kinf_nobody_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA').models.list(),
        OpenAI.AuthenticationError,
        'authentication_error',
        'invalid_api_key',
      ],
      [
        openai.chat.completions.create(chat('secret-model')),
        OpenAI.PermissionDeniedError,
        'permission_error',
        'model_forbidden',
      ],
      [
        openai.chat.completions.create(chat('no-such-model')),
        OpenAI.NotFoundError,
        'invalid_request_error',
        'model_not_found',
      ],
      [
        openai.chat.completions.create({
          model: 'qwen3.8-27b-fp8',
          messages: [{ role: 'user', content: 5 as never }],
        }),
        OpenAI.BadRequestError,
        'invalid_request_error',
        'invalid_request',
      ],
    ]
    for (const [call, type, errorType, code] of cases) {
      const error = await thrown(call)
      expect(error).toBeInstanceOf(type)
      expect(error.type).toBe(errorType)
      expect(error.code).toBe(code)
      expect(error.requestID).toMatch(/\S/)
    }
  })

  it('words validation errors as field: problem, without zod’s terminal marks', async () => {
    const error = await thrown(
      openai.chat.completions.create({
        model: 'qwen3.8-27b-fp8',
        messages: [{ role: 'user', content: 5 as never }],
      }),
    )
    expect(error.message).toMatch(/^400 messages\[0\]\.content: Expected string, array or null$/)
    expect(error.message).not.toMatch(/[✖→]/)
  })

  it('puts x-request-id on every answer, errors and unknown paths included', async () => {
    for (const [path, init] of [
      ['/v1/nothing-here', {}],
      ['/v1/models', {}],
      ['/v1/chat/completions', { method: 'POST', body: '{}' }],
    ] as const) {
      const response = await fetch(`${stack.edge.url}${path}`, init)
      expect(response.status).toBeGreaterThanOrEqual(400)
      expect(response.headers.get('x-request-id')).toMatch(/\S/)
    }
    const echoed = await fetch(`${stack.edge.url}/v1/nothing-here`, {
      headers: { 'x-request-id': 'mine-42' },
    })
    expect(echoed.headers.get('x-request-id')).toBe('mine-42')
  })

  it('sends OpenAI’s x-ratelimit-* headers from the tenant’s quota state', async () => {
    const { response } = await openai.chat.completions
      .create(chat('qwen3.8-27b-fp8'))
      .withResponse()
    const header = (name: string) => response.headers.get(`x-ratelimit-${name}`)
    expect(header('limit-requests')).toBe('600')
    expect(header('limit-tokens')).toBe('2000000')
    // The buckets refill continuously (600 requests and 2M tokens a minute): a request's
    // own charge may be refilled by the time it is answered, so only the bounds hold here;
    // test/workers/app/quota-state.test.ts checks the arithmetic on a stopped clock.
    expect(Number(header('remaining-requests'))).toBeLessThanOrEqual(600)
    expect(Number(header('remaining-requests'))).toBeGreaterThan(0)
    expect(Number(header('remaining-tokens'))).toBeLessThanOrEqual(2_000_000)
    expect(header('reset-requests')).toMatch(goDuration)
    expect(header('reset-tokens')).toMatch(goDuration)
  })

  it('always reports prompt_tokens_details.cached_tokens, 0 when nothing was cached, streamed and not', async () => {
    // Prompts no pod has seen: nothing of them is cached.
    const fresh = (text: string) => ({
      ...chat('qwen3.8-27b-fp8'),
      messages: [{ role: 'user' as const, content: text }],
    })
    const answer = await openai.chat.completions.create(fresh('Zebra quartz fjord.'))
    expect(answer.usage?.prompt_tokens_details?.cached_tokens).toBe(0)
    const stream = await openai.chat.completions.create({
      ...fresh('Violet anvil tundra.'),
      stream: true,
      stream_options: { include_usage: true },
    })
    let usage: OpenAI.CompletionUsage | undefined
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage
    expect(usage?.prompt_tokens_details?.cached_tokens).toBe(0)
  })

  it('refuses vLLM-only fields the tenant’s policy does not allow, and passes those it does', async () => {
    const error = await thrown(
      openai.chat.completions.create({ ...chat('qwen3.8-27b-fp8'), priority: -10 } as never),
    )
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect(error).toMatchObject({ param: 'priority', code: 'unsupported_parameter' })
    // Its default is no jump, so it passes; so does the field the policy allows.
    for (const extra of [{ priority: 0 }, { mm_processor_kwargs: { size: 1 } }]) {
      const answer = await openai.chat.completions.create({
        ...chat('qwen3.8-27b-fp8'),
        ...extra,
      } as never)
      expect(answer).toHaveProperty('choices')
    }
  })
})
