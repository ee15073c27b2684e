import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  type ConverseStreamOutput,
} from '@aws-sdk/client-bedrock-runtime'
import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  type FakeBedrock,
  startFakeBedrock,
} from '../../../../control-plane/lab/bedrock-stand-in/start-fake-bedrock.ts'
import { type GatedClock, gatedClock } from './gated-clock.ts'

const sigV4 =
  'AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=' +
  '0'.repeat(64)
const hello = { messages: [{ role: 'user' as const, content: [{ text: 'hello fake world' }] }] }

let fake: FakeBedrock
let client: BedrockRuntimeClient
afterEach(async () => {
  client?.destroy()
  await fake?.close()
})

async function start(clock?: GatedClock) {
  fake = await startFakeBedrock(clock ? { now: clock.now, sleep: clock.sleep } : {})
  client = new BedrockRuntimeClient({
    region: 'us-east-1',
    endpoint: fake.url,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
    maxAttempts: 1,
  })
}

/** Lets the server generate one more token: waits until it waits, then ends that wait. */
async function tick(clock: GatedClock) {
  await vi.waitFor(() => expect(clock.waiting).toBe(1))
  clock.tick()
}

/** The next text delta of an SDK event stream (messageStart and the like skipped). */
async function nextWord(events: AsyncIterator<ConverseStreamOutput>): Promise<string> {
  for (;;) {
    const next = await events.next()
    if (next.done) throw new Error('the stream ended')
    const text = next.value.contentBlockDelta?.delta?.text
    if (text !== undefined) return text
  }
}

describe('long, paced answers (words:N, pace:R) and what the fake records as processed', () => {
  it('streams one word a token and stops generating when the SDK client cancels mid-way', async () => {
    const clock = gatedClock()
    await start(clock)
    const cancel = new AbortController()
    const output = await client.send(
      new ConverseStreamCommand({ modelId: 'fake.long+words:500+pace:20', ...hello }),
      { abortSignal: cancel.signal },
    )
    const events = (output.stream as AsyncIterable<ConverseStreamOutput>)[Symbol.asyncIterator]()
    const words: string[] = []
    for (let i = 0; i < 7; i++) {
      await tick(clock)
      words.push(await nextWord(events))
    }
    expect(words.join('')).toBe('Echo: hello fake world hello fake world')
    cancel.abort()
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true))
    // The wait for the 8th token ended with the client: nothing more was generated.
    await vi.waitFor(() => expect(clock.waiting).toBe(0))
    expect(fake.processed).toEqual([
      {
        requestNumber: 1,
        requestId: fake.requests[0]?.requestId,
        modelId: 'fake.long+words:500+pace:20',
        operation: 'converse-stream',
        inputTokens: 3,
        cacheReadInputTokens: 0,
        cacheWriteInputTokens: 0,
        outputTokens: 7,
        completed: false,
      },
    ])
    // Each token waited its turn at 20 a second: 50 ms of the clock apiece.
    expect(clock.now()).toBe(350)
  })

  it('records a stream cut over HTTP/1.1 (fetch) as partial, and a complete one as complete', async () => {
    const clock = gatedClock()
    await start(clock)
    const response = await fetch(`${fake.url}/model/fake.h1+words:100+pace:5/converse-stream`, {
      method: 'POST',
      headers: { authorization: sigV4, 'content-type': 'application/json' },
      body: JSON.stringify(hello),
    })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let deltas = 0
    const reading = (async () => {
      const codec = new EventStreamCodec(toUtf8, fromUtf8)
      let buffered = new Uint8Array()
      for (;;) {
        const chunk = await reader.read()
        if (chunk.done) return
        buffered = new Uint8Array([...buffered, ...chunk.value])
        while (buffered.length >= 4) {
          const length = new DataView(buffered.buffer, buffered.byteOffset).getUint32(0)
          if (buffered.length < length) break
          const message = codec.decode(buffered.subarray(0, length))
          if (message.headers[':event-type']?.value === 'contentBlockDelta') deltas++
          buffered = buffered.subarray(length)
        }
      }
    })()
    for (let i = 1; i <= 4; i++) {
      await tick(clock)
      await vi.waitFor(() => expect(deltas).toBe(i))
    }
    await reader.cancel()
    await reading
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true))
    expect(fake.processed[0]).toMatchObject({ outputTokens: 4, completed: false })

    const whole = await fetch(`${fake.url}/model/fake.h1+words:3+pace:5/converse-stream`, {
      method: 'POST',
      headers: { authorization: sigV4, 'content-type': 'application/json' },
      body: JSON.stringify(hello),
    })
    const body = whole.arrayBuffer()
    for (let i = 0; i < 3; i++) await tick(clock)
    await body
    expect(fake.processed[1]).toMatchObject({ outputTokens: 3, completed: true })
    expect(fake.requests[1]?.aborted).toBe(false)
  })

  it('answers a paced Converse once every token is generated; one cut mid-way is partial', async () => {
    const clock = gatedClock()
    await start(clock)
    const whole = client.send(
      new ConverseCommand({ modelId: 'fake.nonstream+words:6+pace:2', ...hello }),
    )
    for (let i = 0; i < 6; i++) await tick(clock)
    const answer = await whole
    expect(answer.output?.message?.content).toEqual([{ text: 'Echo: hello fake world hello fake' }])
    expect(answer.usage).toEqual({ inputTokens: 3, outputTokens: 6, totalTokens: 9 })
    expect(fake.processed[0]).toMatchObject({ inputTokens: 3, outputTokens: 6, completed: true })

    const leave = new AbortController()
    const cut = client
      .send(new ConverseCommand({ modelId: 'fake.nonstream+words:1000+pace:2', ...hello }), {
        abortSignal: leave.signal,
      })
      .catch((error: unknown) => error)
    for (let i = 0; i < 9; i++) await tick(clock)
    await vi.waitFor(() => expect(clock.waiting).toBe(1))
    leave.abort()
    expect(await cut).toMatchObject({ name: 'AbortError' })
    await vi.waitFor(() => expect(fake.requests[1]?.aborted).toBe(true))
    await vi.waitFor(() => expect(clock.waiting).toBe(0))
    expect(fake.processed[1]).toMatchObject({ outputTokens: 9, completed: false })
    expect(fake.requests[1]?.status).toBe(0)
  })

  it('paces with real timers when no clock is passed, and serves the record over HTTP', async () => {
    await start()
    const output = await client.send(
      new ConverseStreamCommand({ modelId: 'fake.timers+words:5+pace:1000', ...hello }),
    )
    let text = ''
    for await (const event of output.stream ?? [])
      text += event.contentBlockDelta?.delta?.text ?? ''
    expect(text).toBe('Echo: hello fake world hello')
    const served = (await (await fetch(`${fake.url}/__fake/processed`)).json()) as {
      processed: unknown
    }
    expect(served.processed).toEqual(fake.processed)
    expect(fake.processed).toMatchObject([{ outputTokens: 5, completed: true }])
  })

  it('counts the tokens generated before an injected stream error, and none for refused calls', async () => {
    await start()
    const output = await client.send(
      new ConverseStreamCommand({ modelId: 'fake.err+stream-error-after:3', ...hello }),
    )
    await expect(async () => {
      for await (const _ of output.stream ?? []);
    }).rejects.toMatchObject({ name: 'ModelStreamErrorException' })
    // messageStart, "Echo:", "hello", then the exception: two tokens generated.
    expect(fake.processed).toMatchObject([{ outputTokens: 2, completed: false }])
    await expect(
      client.send(new ConverseCommand({ modelId: 'fake.err+throttle', ...hello })),
    ).rejects.toMatchObject({ name: 'ThrottlingException' })
    // The SDK reads the first event before it answers: the in-stream throttle is its error.
    await expect(
      client.send(new ConverseStreamCommand({ modelId: 'fake.err+stream-throttle', ...hello })),
    ).rejects.toMatchObject({ name: 'ThrottlingException' })
    expect(fake.requests).toHaveLength(3)
    expect(fake.processed).toHaveLength(1)
  })

  it('applies a pace set on the server to every call, and counts cached input as read', async () => {
    await start()
    fake.setFaults(['words:4', 'pace:500'])
    const body = {
      system: [{ text: 'a shared system prompt' }, { cachePoint: { type: 'default' as const } }],
      ...hello,
    }
    const first = await client.send(new ConverseCommand({ modelId: 'fake.server', ...body }))
    expect(first.usage).toMatchObject({ inputTokens: 3, cacheWriteInputTokens: 4, outputTokens: 4 })
    fake.setFaults([])
    expect(fake.processed[0]).toMatchObject({
      inputTokens: 7,
      cacheWriteInputTokens: 4,
      outputTokens: 4,
      completed: true,
    })
  })
})
