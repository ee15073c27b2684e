import { createServer, type Http2Server } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { ChatCompletionRequest } from '../../../shared/openai/chat-completion-request.ts'
import { callBedrock } from '../../../workers/app/bedrock-upstream.ts'
import { fuzzParameters, fuzzTimeoutMs } from '../../support/fuzz-runs.ts'
import { mutatedBytes } from '../../support/mutated-bytes.ts'

// ~10-30 ms a case (a real SDK call over HTTP/2): fewer cases than the in-process targets.
const runs = 300
const codec = new EventStreamCodec(toUtf8, fromUtf8)

/**
 * A Bedrock stand-in that answers ConverseStream with whatever bytes the case sets, over
 * cleartext HTTP/2 as the SDK streams it.
 */
let server: Http2Server
let url: string
let nextBody: Uint8Array = new Uint8Array()
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, {
        'content-type': 'application/vnd.amazon.eventstream',
        'x-amzn-requestid': 'fuzz-request',
      })
      res.end(nextBody)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

type Header =
  | { type: 'string'; value: string }
  | { type: 'integer'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'binary'; value: Uint8Array }
const frame = (headers: Record<string, Header>, payload: unknown) =>
  codec.encode({
    headers,
    body: fromUtf8(typeof payload === 'string' ? payload : JSON.stringify(payload)),
  })
const event = (type: string, payload: unknown) =>
  frame(
    {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    payload,
  )
const exception = (type: string, message: string) =>
  frame(
    {
      ':exception-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    { message },
  )

const text = fc.string({ maxLength: 20 })
const index = fc.oneof({ weight: 9, arbitrary: fc.nat(3) }, fc.constantFrom(-1, 1.5, 2 ** 40))
/** One ConverseStream event, as Bedrock sends it, sometimes with a field of the wrong type. */
const streamEvent = fc.oneof(
  fc.record({ role: fc.constant('assistant') }).map((p) => event('messageStart', p)),
  fc
    .record({
      contentBlockIndex: index,
      delta: fc.oneof(
        fc.record({ text }),
        fc.record({ toolUse: fc.record({ input: text }) }),
        fc.record({ reasoningContent: fc.record({ text }) }),
        fc.jsonValue({ maxDepth: 1 }),
      ),
    })
    .map((p) => event('contentBlockDelta', p)),
  fc
    .record({
      contentBlockIndex: index,
      start: fc.record({ toolUse: fc.record({ toolUseId: text, name: text }) }),
    })
    .map((p) => event('contentBlockStart', p)),
  fc.record({ contentBlockIndex: index }).map((p) => event('contentBlockStop', p)),
  fc
    .record({
      stopReason: fc.constantFrom(
        'end_turn',
        'max_tokens',
        'tool_use',
        'stop_sequence',
        'content_filtered',
        'guardrail_intervened',
        'malformed_model_output',
        'something_new',
      ),
    })
    .map((p) => event('messageStop', p)),
  fc
    .record({
      usage: fc.record({
        inputTokens: fc.oneof(fc.nat(), fc.constant(-1)),
        outputTokens: fc.nat(),
        totalTokens: fc.nat(),
      }),
      metrics: fc.record({ latencyMs: fc.nat() }),
    })
    .map((p) => event('metadata', p)),
  fc
    .tuple(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }))
    .map(([type, p]) => event(type, p)),
  fc.constant(event('contentBlockDelta', '{"contentBlockIndex":0,"delta":')),
  // Headers dropped, of another type, or naming another message type.
  fc
    .tuple(
      fc.dictionary(
        fc.constantFrom(
          ':event-type',
          ':message-type',
          ':content-type',
          ':exception-type',
          ':error-code',
          'x',
        ),
        fc.oneof(
          fc.record({
            type: fc.constant('string' as const),
            value: fc.constantFrom(
              'event',
              'exception',
              'error',
              'messageStart',
              'contentBlockDelta',
              'application/json',
              '',
            ),
          }),
          fc.record({ type: fc.constant('integer' as const), value: fc.integer() }),
          fc.record({ type: fc.constant('boolean' as const), value: fc.boolean() }),
          fc.record({
            type: fc.constant('binary' as const),
            value: fc.uint8Array({ maxLength: 4 }),
          }),
        ),
      ),
      fc.jsonValue({ maxDepth: 2 }),
    )
    .map(([headers, payload]) => frame(headers as Record<string, Header>, payload)),
  fc
    .constantFrom(
      'throttlingException',
      'modelStreamErrorException',
      'validationException',
      'internalServerException',
      'serviceUnavailableException',
      'unknownException',
    )
    .map((type) => exception(type, 'the model stream failed')),
)
const join = (frames: Uint8Array[]) => {
  const out = new Uint8Array(frames.reduce((sum, f) => sum + f.length, 0))
  let at = 0
  for (const f of frames) {
    out.set(f, at)
    at += f.length
  }
  return out
}
/** A whole answer: messageStart, deltas, messageStop, metadata; or events in any order. */
const wellFormed = fc
  .tuple(fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 }), fc.boolean())
  .map(([deltas, usage]) =>
    join([
      event('messageStart', { role: 'assistant' }),
      ...deltas.map((t) =>
        event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: t } }),
      ),
      event('contentBlockStop', { contentBlockIndex: 0 }),
      event('messageStop', { stopReason: 'end_turn' }),
      ...(usage
        ? [
            event('metadata', {
              usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
              metrics: { latencyMs: 1 },
            }),
          ]
        : []),
    ]),
  )
const anyOrder = fc.array(streamEvent, { maxLength: 6 }).map(join)
const body = fc.oneof(
  { weight: 3, arbitrary: mutatedBytes(wellFormed) },
  { weight: 2, arbitrary: anyOrder },
  { weight: 2, arbitrary: mutatedBytes(anyOrder) },
  { weight: 1, arbitrary: wellFormed },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
  {
    weight: 1,
    // A prelude claiming a length far past the bytes: the decoder must wait for the end, then fail.
    arbitrary: fc
      .tuple(fc.integer({ min: 16, max: 2 ** 32 - 1 }), fc.uint8Array({ maxLength: 32 }))
      .map(([length, rest]) => {
        const prelude = new Uint8Array(12 + rest.length)
        new DataView(prelude.buffer).setUint32(0, length)
        prelude.set(rest, 12)
        return prelude
      }),
  },
)

const request = ChatCompletionRequest.parse({
  model: 'claude',
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
  stream_options: { include_usage: true },
})

/**
 * The property: callBedrock resolves to an SSE answer or rejects with a KinfError; the
 * answer's stream reads to its end without throwing, each event a chunk or an
 * OpenAI-shaped error, and it ends with [DONE] or with that error.
 */
async function streamsOrFailsClearly(bytes: Uint8Array): Promise<void> {
  nextBody = bytes
  let response: Response
  try {
    response = await callBedrock(
      {
        region: 'us-east-1',
        endpoint: url,
        modelId: 'fuzz.model',
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'x' },
      },
      request,
      { requestedModel: 'claude', maxRetries: 0 },
    )
  } catch (error) {
    expect(KinfError.isInstance(error), String(error)).toBe(true)
    return
  }
  const text = await response.text()
  const events = text.split('\n\n').filter(Boolean)
  expect(events.length).toBeGreaterThan(0)
  for (const [i, event] of events.entries()) {
    expect(event.startsWith('data: ')).toBe(true)
    const data = event.slice(6)
    if (data === '[DONE]') {
      expect(i).toBe(events.length - 1)
      continue
    }
    const parsed = JSON.parse(data) as {
      error?: { message?: unknown; type?: unknown }
      object?: unknown
    }
    if (parsed.error) {
      expect(i).toBe(events.length - 1)
      expect(String(parsed.error.message).length).toBeGreaterThan(0)
      expect(typeof parsed.error.type).toBe('string')
    } else expect(parsed.object).toBe('chat.completion.chunk')
  }
}

describe('fuzz: Bedrock ConverseStream event-stream frames', () => {
  it('streams a well-formed answer to [DONE]', async () => {
    await streamsOrFailsClearly(fc.sample(wellFormed, { numRuns: 1, seed: 1 })[0] as Uint8Array)
  })

  it(
    'streams, or fails with an OpenAI-shaped error, whatever the frames: cut, bad CRC or lengths, odd headers, any order',
    async () => {
      await fc.assert(fc.asyncProperty(body, streamsOrFailsClearly), {
        ...fuzzParameters(runs, 15_061),
        // A case that hangs fails (and shrinks) on its own rather than timing the test out.
        timeout: 5_000,
      })
    },
    fuzzTimeoutMs(runs),
  )
})
