import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  type FakeBedrock,
  startFakeBedrock,
} from '../../../control-plane/lab/bedrock-stand-in/start-fake-bedrock.ts'
import { ChatCompletion, ChatCompletionChunk } from '../../../shared/bedrock/chat-completion.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { ChatCompletionRequest } from '../../../shared/openai/chat-completion-request.ts'
import { RetryBudget } from '../../../workers/app/bedrock-retry-budget.ts'
import { type BedrockTarget, callBedrock } from '../../../workers/app/bedrock-upstream.ts'

let fake: FakeBedrock
beforeAll(async () => {
  fake = await startFakeBedrock()
})
afterAll(async () => {
  await fake.close()
})

const target = (modelId: string, extra: Partial<BedrockTarget> = {}): BedrockTarget => ({
  region: 'us-east-1',
  endpoint: fake.url,
  modelId,
  credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
  ...extra,
})

/** Unique model ids keep the fake's per-model fault counters apart between tests. */
let counter = 0
const model = (faults = '') => `fake.echo-${++counter}${faults}`

const chat = (body: Record<string, unknown>) =>
  ChatCompletionRequest.parse({ model: 'burst-model', ...body })

const ask = (text: string, extra: Record<string, unknown> = {}) =>
  chat({ messages: [{ role: 'user', content: text }], ...extra })

function recorded(modelId: string) {
  return fake.requests.filter((r) => r.modelId === modelId)
}

async function completion(response: Response): Promise<ChatCompletion> {
  expect(response.headers.get('content-type')).toBe('application/json')
  return ChatCompletion.parse(await response.json())
}

/** The SSE body as parsed data payloads; `[DONE]` stays a string. */
async function events(response: Response): Promise<unknown[]> {
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
  const text = await response.text()
  expect(text.endsWith('\n\n')).toBe(true)
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true)
      const data = block.slice('data: '.length)
      return data === '[DONE]' ? data : JSON.parse(data)
    })
}

async function failure(promise: Promise<unknown>): Promise<KinfError> {
  try {
    await promise
  } catch (error) {
    if (KinfError.isInstance(error)) return error
    throw error
  }
  throw new Error('expected a KinfError')
}

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
}

describe('callBedrock against the fake Bedrock (real SDK, SigV4, event-stream framing)', () => {
  it('answers a non-streamed chat with the requested model name, the request id and usage', async () => {
    const modelId = model()
    const response = await callBedrock(
      target(modelId),
      chat({
        messages: [
          { role: 'system', content: 'Be brief' },
          { role: 'user', content: 'hello there world' },
        ],
      }),
      { requestedModel: 'my-alias' },
    )
    const body = await completion(response)
    const [seen] = recorded(modelId)
    expect(seen?.operation).toBe('converse')
    expect(seen?.aborted).toBe(false)
    expect(seen?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//)
    expect(seen?.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'hello there world' }] }],
      system: [{ text: 'Be brief' }],
    })
    expect(body.id).toBe(`chatcmpl-${seen?.requestId}`)
    expect(body.model).toBe('my-alias')
    expect(body.choices[0]?.message).toEqual({
      role: 'assistant',
      content: 'Echo: hello there world',
    })
    expect(body.choices[0]?.finish_reason).toBe('stop')
    // One token per word: 2 system + 3 user in, 4 out.
    expect(body.usage).toEqual({
      prompt_tokens: 5,
      completion_tokens: 4,
      total_tokens: 9,
      prompt_tokens_details: { cached_tokens: 0 },
    })
  })

  it('streams text in order: role, deltas, finish, [DONE]; usage only with include_usage', async () => {
    const plain = await events(
      await callBedrock(target(model()), ask('one two three', { stream: true }), {
        requestedModel: 'm',
      }),
    )
    expect(plain.at(-1)).toBe('[DONE]')
    const chunks = plain.slice(0, -1).map((c) => ChatCompletionChunk.parse(c))
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' })
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(
      'Echo: one two three',
    )
    expect(chunks.length).toBeGreaterThan(4)
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop')
    expect(chunks.every((c) => c.usage === undefined)).toBe(true)

    const withUsage = await events(
      await callBedrock(
        target(model('+cache-read:2')),
        ask('one two three', { stream: true, stream_options: { include_usage: true } }),
        { requestedModel: 'm' },
      ),
    )
    expect(withUsage.at(-1)).toBe('[DONE]')
    const usage = ChatCompletionChunk.parse(withUsage.at(-2))
    expect(usage.choices).toEqual([])
    expect(usage.usage).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
      prompt_tokens_details: { cached_tokens: 2 },
    })
    expect(ChatCompletionChunk.parse(withUsage.at(-3)).choices[0]?.finish_reason).toBe('stop')
  })

  it('counts cache reads and writes in prompt_tokens, reads as cached_tokens', async () => {
    const body = await completion(
      await callBedrock(target(model('+cache-read:2+cache-write:1')), ask('a b c d'), {
        requestedModel: 'm',
      }),
    )
    expect(body.usage).toEqual({
      prompt_tokens: 4,
      completion_tokens: 5,
      total_tokens: 9,
      prompt_tokens_details: { cached_tokens: 2 },
    })
  })

  it('round-trips a tool call: tool_calls out, the tool result back in', async () => {
    const modelId = model()
    const first = await completion(
      await callBedrock(
        target(modelId),
        ask('Weather in Paris? Use a tool.', { tools: [weatherTool] }),
        {
          requestedModel: 'm',
        },
      ),
    )
    expect(first.choices[0]?.finish_reason).toBe('tool_calls')
    const call = first.choices[0]?.message.tool_calls?.[0]
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } })
    expect(JSON.parse(call?.function.arguments ?? '')).toEqual({ city: 'city-value' })

    const second = await completion(
      await callBedrock(
        target(modelId),
        chat({
          messages: [
            { role: 'user', content: 'Weather in Paris? Use a tool.' },
            first.choices[0]?.message,
            { role: 'tool', tool_call_id: call?.id, content: 'sunny and warm' },
          ],
          tools: [weatherTool],
        }),
        { requestedModel: 'm' },
      ),
    )
    expect(second.choices[0]?.message.content).toBe('Echo: sunny and warm')
    expect(second.choices[0]?.finish_reason).toBe('stop')
    expect(recorded(modelId)[1]?.body).toMatchObject({
      messages: [
        { role: 'user' },
        {
          role: 'assistant',
          content: [{ text: 'Calling get_weather.' }, { toolUse: { toolUseId: call?.id } }],
        },
        {
          role: 'user',
          content: [{ toolResult: { toolUseId: call?.id, content: [{ text: 'sunny and warm' }] } }],
        },
      ],
    })
  })

  it('streams a tool call after text, indexed by tool call', async () => {
    const all = await events(
      await callBedrock(
        target(model()),
        ask('get_weather please', { stream: true, tools: [weatherTool], tool_choice: 'required' }),
        { requestedModel: 'm' },
      ),
    )
    const chunks = all.slice(0, -1).map((c) => ChatCompletionChunk.parse(c))
    const deltas = chunks.map((c) => c.choices[0]?.delta)
    const start = deltas.findIndex((d) => d?.tool_calls?.[0]?.id !== undefined)
    expect(
      deltas
        .slice(1, start)
        .map((d) => d?.content)
        .join(''),
    ).toBe('Calling get_weather.')
    expect(deltas[start]?.tool_calls).toEqual([
      {
        index: 0,
        id: expect.any(String),
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      },
    ])
    const args = deltas.slice(start + 1).flatMap((d) => d?.tool_calls ?? [])
    expect(args.every((t) => t.index === 0)).toBe(true)
    expect(JSON.parse(args.map((t) => t.function.arguments).join(''))).toEqual({
      city: 'city-value',
    })
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls')
  })

  it('maps stop sequences to stop and a max_tokens cut to length; caps at maxOutputTokens', async () => {
    const stopped = await completion(
      await callBedrock(target(model()), ask('alpha beta gamma', { stop: 'gamma' }), {
        requestedModel: 'm',
      }),
    )
    expect(stopped.choices[0]?.message.content).toBe('Echo: alpha beta')
    expect(stopped.choices[0]?.finish_reason).toBe('stop')

    const modelId = model()
    const cut = await completion(
      await callBedrock(
        target(modelId, { maxOutputTokens: 2 }),
        ask('alpha beta gamma', { max_tokens: 50 }),
        {
          requestedModel: 'm',
        },
      ),
    )
    expect(recorded(modelId)[0]?.body).toMatchObject({ inferenceConfig: { maxTokens: 2 } })
    expect(cut.choices[0]?.message.content).toBe('Echo: alpha')
    expect(cut.choices[0]?.finish_reason).toBe('length')
    expect(cut.usage.completion_tokens).toBe(2)
  })

  it.each([
    ['content_filtered', 'content_filter'],
    ['guardrail_intervened', 'content_filter'],
    ['model_context_window_exceeded', 'length'],
    ['malformed_tool_use', 'stop'],
  ])('maps stopReason %s through the SDK to %s', async (stopReason, finishReason) => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const body = await completion(
      await callBedrock(target(model(`+stop:${stopReason}`)), ask('x'), { requestedModel: 'm' }),
    )
    expect(body.choices[0]?.finish_reason).toBe(finishReason)
    expect(warn).toHaveBeenCalledTimes(stopReason.startsWith('malformed') ? 1 : 0)
    warn.mockRestore()
  })

  it('retries a throttle with backoff and jitter, then succeeds', async () => {
    const modelId = model('+throttle-once')
    const sleeps: number[] = []
    const body = await completion(
      await callBedrock(target(modelId), ask('hi'), {
        requestedModel: 'm',
        random: () => 0.5,
        sleep: async (ms) => {
          sleeps.push(ms)
        },
      }),
    )
    expect(body.choices[0]?.message.content).toBe('Echo: hi')
    expect(recorded(modelId).map((r) => r.status)).toEqual([429, 200])
    expect(sleeps).toEqual([187.5])
  })

  it('retries an in-stream throttle that comes before any event', async () => {
    const modelId = model('+stream-throttle-once')
    const all = await events(
      await callBedrock(target(modelId), ask('hi', { stream: true }), {
        requestedModel: 'm',
        sleep: async () => {},
      }),
    )
    expect(all.at(-1)).toBe('[DONE]')
    expect(recorded(modelId)).toHaveLength(2)
  })

  it('gives up after the bounded retries: rate_limited with a retry-after hint', async () => {
    const modelId = model('+throttle')
    const sleeps: number[] = []
    const error = await failure(
      callBedrock(target(modelId), ask('hi'), {
        requestedModel: 'm',
        random: () => 0,
        sleep: async (ms) => {
          sleeps.push(ms)
        },
      }),
    )
    expect(error.code).toBe('rate_limited')
    expect(error.status).toBe(429)
    expect(error.message).toMatch(/ThrottlingException/)
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1)
    expect(recorded(modelId)).toHaveLength(3)
    expect(sleeps).toEqual([125, 250])

    const once = model('+throttle')
    await failure(callBedrock(target(once), ask('hi'), { requestedModel: 'm', maxRetries: 0 }))
    expect(recorded(once)).toHaveLength(1)
  })

  it.each([
    ['validation', 'invalid_request', 400, 1],
    ['access-denied', 'upstream_error', 502, 1],
    ['not-found', 'upstream_error', 502, 1],
    ['model-error', 'upstream_error', 502, 1],
    ['model-timeout', 'upstream_unavailable', 503, 1],
    ['unavailable', 'upstream_unavailable', 503, 3],
    ['internal', 'upstream_unavailable', 503, 3],
    ['not-ready', 'rate_limited', 429, 3],
  ])('maps %s to %s (%i) after %i attempt(s)', async (fault, code, status, attempts) => {
    const modelId = model(`+${fault}`)
    const error = await failure(
      callBedrock(target(modelId), ask('hi'), { requestedModel: 'm', sleep: async () => {} }),
    )
    expect([error.code, error.status]).toEqual([code, status])
    expect(error.message).toMatch(/^Bedrock \w+Exception: ./)
    expect(recorded(modelId)).toHaveLength(attempts)
  })

  it.each([
    ['throttle', 429, true],
    ['unavailable', 503, true],
    ['internal', 503, true],
    ['access-denied', 502, false],
    ['validation', 400, false],
  ])(
    'answers %s with %i, saying when to retry only when retrying can help',
    async (fault, status, later) => {
      for (const stream of [false, true]) {
        const error = await failure(
          callBedrock(target(model(`+${fault}`)), ask('hi', { stream }), {
            requestedModel: 'm',
            sleep: async () => {},
          }),
        )
        expect(error.status).toBe(status)
        if (later) expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1)
        else expect(error.retryAfterSeconds).toBeUndefined()
      }
    },
  )

  it('answers a stream whose first event does not come before the deadline as a 503, not a 200', async () => {
    const modelId = model('+delay:5000')
    const error = await failure(
      callBedrock(target(modelId), ask('hi', { stream: true }), {
        requestedModel: 'm',
        signal: AbortSignal.timeout(200),
      }),
    )
    expect([error.code, error.message]).toEqual([
      'upstream_unavailable',
      'Bedrock did not answer in time',
    ])
    expect(error.retryAfterSeconds).toBe(1)
    await vi.waitFor(() => expect(recorded(modelId)[0]?.aborted).toBe(true), { timeout: 10_000 })
  })

  it('answers a stream that fails before its first event with an error status, not a 200', async () => {
    const modelId = model('+stream-error-after:0')
    const error = await failure(
      callBedrock(target(modelId), ask('hi', { stream: true }), { requestedModel: 'm' }),
    )
    expect([error.code, error.status]).toEqual(['upstream_error', 502])
    expect(error.message).toMatch(/^Bedrock ModelStreamErrorException: /)
    expect(recorded(modelId)).toHaveLength(1)
  })

  it('retries no more calls at once than the budget allows: the others answer at once', async () => {
    const budget = new RetryBudget({ percent: 0, minRetrying: 1 })
    const throttled = () => model('+throttle')
    const [a, b, c] = [throttled(), throttled(), throttled()]
    let backingOff = false
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const first = failure(
      callBedrock(target(a), ask('hi'), {
        requestedModel: 'm',
        retryBudget: budget,
        sleep: () => {
          backingOff = true
          return gate
        },
      }),
    )
    await vi.waitFor(() => expect(backingOff).toBe(true), { timeout: 10_000 })
    const noSleep = { requestedModel: 'm', retryBudget: budget, sleep: async () => {} }
    const second = await failure(callBedrock(target(b), ask('hi'), noSleep))
    expect([second.code, second.retryAfterSeconds]).toEqual(['rate_limited', 1])
    expect(recorded(b)).toHaveLength(1)
    release()
    expect((await first).code).toBe('rate_limited')
    expect(recorded(a)).toHaveLength(3)
    // Its retrying over, the next call may retry again.
    await failure(callBedrock(target(c), ask('hi'), noSleep))
    expect(recorded(c)).toHaveLength(3)
  })

  it('refuses what Bedrock cannot do before calling it, naming the field', async () => {
    const before = fake.requests.length
    const error = await failure(
      callBedrock(target(model()), ask('hi', { n: 3 }), { requestedModel: 'm' }),
    )
    expect(error.code).toBe('invalid_request')
    expect(error.message).toMatch(/^n is not supported on this backend/)
    expect(fake.requests.length).toBe(before)
  })

  it('ends a stream that fails midway with an OpenAI error event and no [DONE]', async () => {
    const all = await events(
      await callBedrock(
        target(model('+stream-error-after:3')),
        ask('one two three four', { stream: true }),
        {
          requestedModel: 'm',
        },
      ),
    )
    expect(all.at(-1)).toEqual({
      error: {
        message: expect.stringMatching(/^Bedrock ModelStreamErrorException: /),
        type: 'server_error',
        param: null,
        code: 'upstream_error',
      },
    })
    expect(all).not.toContain('[DONE]')
    expect(
      all.slice(0, -1).map((c) => ChatCompletionChunk.parse(c).choices[0]?.delta.content),
    ).toEqual(['', 'Echo:', ' one'])
  })

  it('cancels the upstream stream when the client goes away', async () => {
    const modelId = model('+delay:100')
    const response = await callBedrock(
      target(modelId),
      ask('a b c d e f g h i j k l m n o p', { stream: true }),
      { requestedModel: 'm' },
    )
    const reader = response.body?.getReader()
    const first = await reader?.read()
    expect(new TextDecoder().decode(first?.value)).toMatch(/^data: \{/)
    await reader?.cancel()
    await vi.waitFor(() => expect(recorded(modelId)[0]?.aborted).toBe(true), { timeout: 10_000 })
  })

  it('ends a stream with an error event when the deadline passes midway, and cancels upstream', async () => {
    const modelId = model('+delay:100')
    const deadline = new AbortController()
    const response = await callBedrock(
      target(modelId),
      ask('a b c d e f g h i j k l m n o p', { stream: true }),
      { requestedModel: 'm', signal: deadline.signal },
    )
    const reader = response.body?.getReader()
    await reader?.read()
    deadline.abort(new DOMException('deadline', 'TimeoutError'))
    let rest = ''
    for (;;) {
      const next = await reader?.read()
      if (!next || next.done) break
      rest += new TextDecoder().decode(next.value)
    }
    expect(rest).not.toContain('[DONE]')
    expect(rest.trim().split('\n\n').at(-1)).toBe(
      `data: ${JSON.stringify({ error: { message: 'Bedrock did not answer in time', type: 'server_error', param: null, code: 'upstream_unavailable' } })}`,
    )
    await vi.waitFor(() => expect(recorded(modelId)[0]?.aborted).toBe(true), { timeout: 10_000 })
  })

  it('answers a deadline that passes before Bedrock answers as upstream_unavailable', async () => {
    const modelId = model('+delay:5000')
    const error = await failure(
      callBedrock(target(modelId), ask('hi'), {
        requestedModel: 'm',
        signal: AbortSignal.timeout(50),
      }),
    )
    expect(error.code).toBe('upstream_unavailable')
    expect(error.message).toBe('Bedrock did not answer in time')
    await vi.waitFor(() => expect(recorded(modelId)[0]?.aborted).toBe(true), { timeout: 10_000 })
  })
})
