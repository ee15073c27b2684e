import {
  BedrockRuntimeClient,
  ConverseCommand,
  type ConverseCommandInput,
  ConverseStreamCommand,
  type ConverseStreamOutput,
} from '@aws-sdk/client-bedrock-runtime'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  type FakeBedrock,
  startFakeBedrock,
} from '../../../control-plane/lab/bedrock-stand-in/start-fake-bedrock.ts'
import type { ConverseRequest } from '../../../shared/bedrock/converse-request.ts'
import { countBedrockTokens, withAnswerSoFar } from '../../../workers/app/bedrock-count-tokens.ts'
import { gatedClock } from '../../control-plane/lab/bedrock-stand-in/gated-clock.ts'

const clock = gatedClock()
let fake: FakeBedrock
let client: BedrockRuntimeClient
const clientOf = (endpoint: string) =>
  new BedrockRuntimeClient({
    region: 'us-east-1',
    endpoint,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
    maxAttempts: 1,
  })
beforeAll(async () => {
  // The gated clock paces only what asks for pace:R or delay:ms; the rest answers at once.
  fake = await startFakeBedrock({ now: clock.now, sleep: clock.sleep })
  client = clientOf(fake.url)
})
afterAll(async () => {
  client.destroy()
  await fake.close()
})

/** Unique model ids keep the fake's per-model fault counters apart between tests. */
let counter = 0
const model = (faults = '') => `fake.count-${++counter}${faults}`
const user = (text: string) => ({ role: 'user' as const, content: [{ text }] })
const assistant = (text: string) => ({ role: 'assistant' as const, content: [{ text }] })
/** The same request through Converse; these carry no image, so the wire shape is the SDK's. */
const converse = (modelId: string, request: ConverseRequest) =>
  new ConverseCommand({ modelId, ...request } as ConverseCommandInput)
const countRequests = (modelId: string) =>
  fake.requests.filter((r) => r.modelId === modelId && r.operation === 'count-tokens').length

const weather = {
  tools: [
    {
      toolSpec: {
        name: 'get_weather',
        description: 'The weather in a city, now',
        inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } },
      },
    },
  ],
}
const requests: Record<string, ConverseRequest> = {
  'a system prompt': { system: [{ text: 'You are a terse assistant.' }], messages: [user('Hi')] },
  'several turns': {
    system: [{ text: 'Answer in French.' }],
    messages: [user('hello there'), assistant('bonjour'), user('how are you today?')],
  },
  'tool definitions': { messages: [user('What is the weather like?')], toolConfig: weather },
  'a tool call and its result': {
    messages: [
      user('Weather in Paris, please'),
      {
        role: 'assistant',
        content: [
          { text: 'Checking.' },
          { toolUse: { toolUseId: 't1', name: 'get_weather', input: { city: 'Paris' } } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            toolResult: {
              toolUseId: 't1',
              content: [{ text: 'sunny, 21 degrees' }, { json: { wind: 'light', gusts: null } }],
            },
          },
        ],
      },
    ],
    toolConfig: weather,
  },
}

describe('countBedrockTokens (the real SDK CountTokensCommand) against the Bedrock stand-in', () => {
  it.each(Object.entries(requests))('counts %s as Converse bills its input', async (_, request) => {
    const modelId = model()
    const count = await countBedrockTokens(client, modelId, request)
    const { usage } = await client.send(converse(modelId, request))
    expect(count).toBeGreaterThan(0)
    expect(count).toBe(usage?.inputTokens)
    expect(
      fake.requests.find((r) => r.operation === 'count-tokens' && r.modelId === modelId),
    ).toMatchObject({ body: { input: { converse: { messages: request.messages } } } })
  })

  it('counts cached system text too: all of it is input the model reads', async () => {
    const modelId = model()
    const request: ConverseRequest = {
      system: [{ text: 'A long shared prompt' }, { cachePoint: { type: 'default' } }],
      messages: [user('hello fake world')],
      inferenceConfig: { maxTokens: 50 },
    }
    const count = await countBedrockTokens(client, modelId, request)
    const { usage } = await client.send(converse(modelId, request))
    expect(usage).toMatchObject({ inputTokens: 3, cacheWriteInputTokens: 4 })
    expect(count).toBe(7)
  })

  it('sends images as bytes, which carry no words here', async () => {
    const image = { image: { format: 'png' as const, source: { bytes: 'iVBORw0KGgo=' } } }
    const plain = { messages: [user('describe this')] }
    const withImage = {
      messages: [{ role: 'user' as const, content: [image, { text: 'describe this' }] }],
    }
    expect(await countBedrockTokens(client, model(), withImage)).toBe(
      await countBedrockTokens(client, model(), plain),
    )
  })

  it('returns null for a model without CountTokens, and asks no more for it', async () => {
    const modelId = model('+no-count-tokens')
    expect(
      await countBedrockTokens(client, modelId, requests['a system prompt'] as ConverseRequest),
    ).toBeNull()
    expect(
      await countBedrockTokens(client, modelId, requests['several turns'] as ConverseRequest),
    ).toBeNull()
    expect(countRequests(modelId)).toBe(1)
    // Another client (region, endpoint, key) asks for itself.
    const other = clientOf(fake.url)
    expect(
      await countBedrockTokens(other, modelId, requests['several turns'] as ConverseRequest),
    ).toBeNull()
    other.destroy()
    expect(countRequests(modelId)).toBe(2)
  })

  it('returns null, never throws, when the call fails; a passing failure is asked again', async () => {
    const request = requests['several turns'] as ConverseRequest
    const throttled = model('+throttle-once')
    expect(await countBedrockTokens(client, throttled, request)).toBeNull()
    expect(await countBedrockTokens(client, throttled, request)).toBe(10)
    expect(await countBedrockTokens(client, model('+not-found'), request)).toBeNull()
    expect(await countBedrockTokens(client, model('+access-denied'), request)).toBeNull()
    const refused = { messages: [user('a'), user('b')] }
    expect(await countBedrockTokens(client, model(), refused)).toBeNull()
    const badImage = {
      messages: [
        {
          role: 'user' as const,
          content: [{ image: { format: 'png' as const, source: { bytes: '%%' } } }],
        },
      ],
    }
    expect(await countBedrockTokens(client, model(), badImage)).toBeNull()
    const closed = await startFakeBedrock()
    const unreachable = clientOf(closed.url)
    await closed.close()
    expect(await countBedrockTokens(unreachable, model(), request)).toBeNull()
    unreachable.destroy()
  })

  it('returns null when its signal is aborted, before or during the call', async () => {
    const request = requests['a system prompt'] as ConverseRequest
    const early = model()
    expect(await countBedrockTokens(client, early, request, AbortSignal.abort())).toBeNull()
    expect(countRequests(early)).toBe(0)
    const late = model('+delay:60000')
    const stop = new AbortController()
    const counting = countBedrockTokens(client, late, request, stop.signal)
    await vi.waitFor(() => expect(clock.waiting).toBe(1))
    stop.abort()
    expect(await counting).toBeNull()
    await vi.waitFor(() => expect(clock.waiting).toBe(0))
  })
})

describe('withAnswerSoFar: the input plus the output a client received', () => {
  it('adds the received text as the assistant turn, or to a prefilled one', async () => {
    const request = requests['several turns'] as ConverseRequest
    const base = await countBedrockTokens(client, model(), request)
    const answered = withAnswerSoFar(request, 'Je vais très bien')
    expect(answered.messages.at(-1)).toEqual(assistant('Je vais très bien'))
    expect(await countBedrockTokens(client, model(), answered)).toBe((base ?? 0) + 4)

    const prefilled = { messages: [user('Count to five'), assistant('One,')] }
    const more = withAnswerSoFar(prefilled, ' two, three,')
    expect(more.messages).toHaveLength(2)
    expect(await countBedrockTokens(client, model(), more)).toBe(3 + 1 + 2)
    expect(withAnswerSoFar(request, ' \n ')).toBe(request)
  })

  it('charges a stream cut mid-way what the stand-in processed (issue 22)', async () => {
    const modelId = model('+words:400+pace:25')
    const request: ConverseRequest = {
      system: [{ text: 'Tell a long story.' }],
      messages: [user('Once upon a time')],
    }
    const leave = new AbortController()
    const output = await client.send(
      new ConverseStreamCommand({ modelId, ...request } as ConverseCommandInput),
      {
        abortSignal: leave.signal,
      },
    )
    const events = (output.stream as AsyncIterable<ConverseStreamOutput>)[Symbol.asyncIterator]()
    let received = ''
    for (let words = 0; words < 11; ) {
      await vi.waitFor(() => expect(clock.waiting).toBe(1))
      clock.tick()
      for (;;) {
        const next = await events.next()
        const text = next.value?.contentBlockDelta?.delta?.text
        if (text !== undefined) {
          received += text
          words++
          break
        }
      }
    }
    leave.abort()
    await vi.waitFor(() => expect(clock.waiting).toBe(0))
    const processed = fake.processed.find((p) => p.modelId === modelId)
    expect(processed).toMatchObject({ outputTokens: 11, completed: false })
    const charged = await countBedrockTokens(client, modelId, withAnswerSoFar(request, received))
    expect(charged).toBe((processed?.inputTokens ?? 0) + (processed?.outputTokens ?? 0))
  })
})
