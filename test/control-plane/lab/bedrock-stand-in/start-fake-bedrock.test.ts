import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type FakeBedrock,
  startFakeBedrock,
} from '../../../../control-plane/lab/bedrock-stand-in/start-fake-bedrock.ts'

let fake: FakeBedrock
beforeAll(async () => {
  fake = await startFakeBedrock()
})
afterAll(async () => {
  await fake.close()
})

const sigV4 =
  'AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=' +
  '0'.repeat(64)

/** Plain fetch: HTTP/1.1, as workerd and curl speak to the fake. */
function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = { authorization: sigV4 },
) {
  return fetch(`${fake.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
}

const hello = { messages: [{ role: 'user', content: [{ text: 'hello fake world' }] }] }

/** Splits an event-stream body into messages by their prelude's total length; decode checks CRCs. */
function decodeMessages(bytes: Uint8Array) {
  const codec = new EventStreamCodec(toUtf8, fromUtf8)
  const messages = []
  for (let at = 0; at < bytes.length; ) {
    const length = new DataView(bytes.buffer, bytes.byteOffset + at).getUint32(0)
    const message = codec.decode(bytes.subarray(at, at + length))
    const headers = Object.fromEntries(
      Object.entries(message.headers).map(([k, v]) => [k, v.value]),
    )
    messages.push({ headers, payload: JSON.parse(toUtf8(message.body)) })
    at += length
  }
  return messages
}

describe('fake Bedrock over HTTP/1.1', () => {
  it('requires a SigV4-shaped Authorization header', async () => {
    const missing = await post('/model/fake.echo/converse', hello, {})
    expect(missing.status).toBe(403)
    expect(missing.headers.get('x-amzn-errortype')).toMatch(/^MissingAuthenticationTokenException:/)
    const bearer = await post('/model/fake.echo/converse', hello, { authorization: 'Bearer abc' })
    expect(bearer.status).toBe(400)
    expect(bearer.headers.get('x-amzn-errortype')).toMatch(/^IncompleteSignatureException:/)
  })

  it('counts the Converse calls it received, for tests that cannot reach this object', async () => {
    const count = async () =>
      ((await (await fetch(`${fake.url}/__fake/requests`)).json()) as { count: number }).count
    const before = await count()
    expect(before).toBe(fake.requests.filter((r) => r.operation !== 'count-tokens').length)
    await post('/model/fake.echo/converse', hello)
    // CountTokens is not a Converse call: it runs no model.
    expect(
      (await post('/model/fake.echo/count-tokens', { input: { converse: hello } })).status,
    ).toBe(200)
    expect(await count()).toBe(before + 1)
    expect((await fetch(`${fake.url}/__fake/nothing`)).status).toBe(404)
  })

  it('answers Converse deterministically with a request id', async () => {
    const response = await post('/model/fake.echo/converse', hello)
    expect(response.status).toBe(200)
    expect(response.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/)
    expect(await response.json()).toEqual({
      output: { message: { role: 'assistant', content: [{ text: 'Echo: hello fake world' }] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
      metrics: { latencyMs: 42 },
    })
  })

  it('streams real event-stream frames in Bedrock order, metadata after messageStop', async () => {
    const response = await post('/model/fake.echo/converse-stream', hello)
    expect(response.headers.get('content-type')).toBe('application/vnd.amazon.eventstream')
    const messages = decodeMessages(new Uint8Array(await response.arrayBuffer()))
    expect(messages.every((m) => m.headers[':message-type'] === 'event')).toBe(true)
    expect(messages.every((m) => m.headers[':content-type'] === 'application/json')).toBe(true)
    expect(messages.map((m) => m.headers[':event-type'])).toEqual([
      'messageStart',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockStop',
      'messageStop',
      'metadata',
    ])
    expect(messages.map((m) => m.payload.delta?.text ?? '').join('')).toBe('Echo: hello fake world')
  })

  it('sends an in-stream exception after N events', async () => {
    const response = await post('/model/fake.echo/converse-stream', hello, {
      authorization: sigV4,
      'x-fake-bedrock-fault': 'stream-error-after:2',
    })
    const messages = decodeMessages(new Uint8Array(await response.arrayBuffer()))
    expect(messages).toHaveLength(3)
    expect(messages[2]?.headers).toMatchObject({
      ':message-type': 'exception',
      ':exception-type': 'modelStreamErrorException',
    })
  })

  it('answers injected faults, once-only faults and unknown faults', async () => {
    const throttled = await post('/model/fake.once+throttle-once/converse', hello)
    expect(throttled.status).toBe(429)
    expect(throttled.headers.get('x-amzn-errortype')).toMatch(/^ThrottlingException:/)
    expect(await throttled.json()).toEqual({ message: expect.stringMatching(/Too many requests/) })
    expect((await post('/model/fake.once+throttle-once/converse', hello)).status).toBe(200)
    const unknown = await post('/model/fake.echo/converse', hello, {
      authorization: sigV4,
      'x-fake-bedrock-fault': 'explode',
    })
    expect(unknown.status).toBe(400)
    expect(await unknown.json()).toEqual({ message: 'unknown fault explode' })
  })

  it('answers N words with words:N and refuses bad lengths and paces', async () => {
    const answer = async (faults: string) => {
      const response = await post('/model/fake.echo/converse', hello, {
        authorization: sigV4,
        'x-fake-bedrock-fault': faults,
      })
      return { status: response.status, body: await response.json() }
    }
    expect(await answer('words:2')).toMatchObject({
      status: 200,
      body: { output: { message: { content: [{ text: 'Echo: hello' }] } } },
    })
    const long = (await answer('words:12,pace:1000')).body as {
      output: { message: { content: { text: string }[] } }
      usage: unknown
    }
    expect(long.output.message.content[0]?.text.split(' ')).toHaveLength(12)
    expect(long.usage).toEqual({ inputTokens: 3, outputTokens: 12, totalTokens: 15 })
    for (const [fault, message] of [
      ['words:0', 'fault words:0: an answer is 1 to 1000000 words'],
      ['words:1000001', 'fault words:1000001: an answer is 1 to 1000000 words'],
      ['pace:0', 'fault pace:0: not a positive number of tokens a second'],
      ['pace:', 'fault pace:: not a positive number of tokens a second'],
      ['pace:fast', 'fault pace:fast: not a positive number of tokens a second'],
    ]) {
      expect(await answer(fault ?? '')).toEqual({ status: 400, body: { message } })
    }
    // A maxTokens below N cuts the long answer as it cuts any.
    const capped = await post('/model/fake.echo+words:50/converse', {
      ...hello,
      inferenceConfig: { maxTokens: 5 },
    })
    expect(await capped.json()).toMatchObject({
      stopReason: 'max_tokens',
      usage: { outputTokens: 5 },
    })
  })

  it('fails one request in N with -every:N', async () => {
    const statuses = []
    for (let i = 0; i < 6; i++)
      statuses.push((await post('/model/fake.every+unavailable-every:3/converse', hello)).status)
    expect(statuses).toEqual([503, 200, 200, 503, 200, 200])
  })

  it('applies faults set on the server to every request until they are cleared', async () => {
    fake.setFaults(['throttle'])
    try {
      expect((await post('/model/fake.storm-a/converse', hello)).status).toBe(429)
      expect((await post('/model/fake.storm-b/converse-stream', hello)).status).toBe(429)
    } finally {
      fake.setFaults([])
    }
    expect((await post('/model/fake.storm-a/converse', hello)).status).toBe(200)
    expect(() => fake.setFaults(['explode'])).toThrow('unknown fault explode')
    expect((await post('/model/fake.storm-a/converse', hello)).status).toBe(200)
  })

  it('refuses what Bedrock refuses: roles that do not alternate, tool blocks without toolConfig', async () => {
    const twice = await post('/model/fake.echo/converse', {
      messages: [
        { role: 'user', content: [{ text: 'a' }] },
        { role: 'user', content: [{ text: 'b' }] },
      ],
    })
    expect(twice.status).toBe(400)
    expect(await twice.json()).toEqual({ message: expect.stringMatching(/must alternate/) })
    const tools = await post('/model/fake.echo/converse', {
      messages: [
        { role: 'user', content: [{ toolResult: { toolUseId: 't', content: [{ text: 'r' }] } }] },
      ],
    })
    expect(tools.status).toBe(400)
    expect(await tools.json()).toEqual({
      message: expect.stringMatching(/toolConfig field must be defined/),
    })
  })

  it('writes a cached system prefix first, then reads it', async () => {
    const body = {
      system: [{ text: 'a long shared system prompt' }, { cachePoint: { type: 'default' } }],
      ...hello,
    }
    const first = (await (await post('/model/fake.echo/converse', body)).json()) as {
      usage: unknown
    }
    const second = (await (await post('/model/fake.echo/converse', body)).json()) as {
      usage: unknown
    }
    expect(first.usage).toEqual({
      inputTokens: 3,
      outputTokens: 4,
      totalTokens: 12,
      cacheWriteInputTokens: 5,
    })
    expect(second.usage).toEqual({
      inputTokens: 3,
      outputTokens: 4,
      totalTokens: 12,
      cacheReadInputTokens: 5,
    })
  })
})

describe('startFakeBedrock options', () => {
  it('listens on a free loopback port by default and refuses a port out of range', async () => {
    expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(fake.url).not.toMatch(/:0$/)
    await expect(startFakeBedrock({ port: 70_000 })).rejects.toMatchObject({
      code: 'invalid_config',
      message: 'fake bedrock: port must be a port number',
    })
  })
})
