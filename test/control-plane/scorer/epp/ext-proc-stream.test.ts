import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type {
  ExtProcRequest,
  ExtProcResponse,
} from '../../../../control-plane/scorer/epp/ext-proc-messages.ts'
import { openExtProcStream } from '../../../../control-plane/scorer/epp/ext-proc-stream.ts'
import { replayEnvoy } from '../../../support/ext-proc-client.ts'
import {
  replayChatBody as chatBody,
  type ExtProcHarness,
  replaySseChunks as sse,
  startExtProcHarness,
} from '../../../support/ext-proc-harness.ts'
import {
  type PickAnswer,
  pickFirstTwo,
  type RecordedExchange,
  recordingEndpointPicker,
} from '../../../support/recording-endpoint-picker.ts'

let harness: ExtProcHarness
beforeAll(async () => {
  harness = await startExtProcHarness(1024 * 1024)
})
afterAll(() => harness.close())
beforeEach(() => harness.answer(pickFirstTwo))

describe('a streamed chat request (FULL_DUPLEX_STREAMED)', () => {
  it('defers the headers answer to the body end, routes by header and metadata, re-emits the body', async () => {
    const result = await replayEnvoy(harness.client, {
      body: chatBody,
      chunkSize: 20,
      response: { status: 200, served: '10.0.0.1:8000', chunks: sse },
    })
    const kinds = result.responses.map((item) => item.response?.response ?? item.kind)
    expect(kinds.slice(0, 2)).toEqual(['request_headers', 'request_body'])
    expect(kinds).toEqual([
      'request_headers',
      'request_body',
      'response_headers',
      ...sse.map(() => 'response_body'),
      'end',
    ])
    expect(result.destination).toBe('10.0.0.1:8000,10.0.0.2:8000')
    expect(result.metadataDestination).toBe(result.destination)
    expect(result.setHeaders['x-kinference-engine']).toBe('primary')
    expect(result.setHeaders['content-length']).toBe(String(Buffer.byteLength(chatBody)))
    expect(result.responses[0]?.response?.request_headers?.response?.clear_route_cache).toBe(true)
    expect(result.streamedRequestBody.toString()).toBe(chatBody)
    expect(result.streamedRequestChunks.at(-1)?.endOfStream).toBe(true)
    expect(result.echoedResponseBody.toString()).toBe(sse.join(''))
    const record = harness.last()
    expect(record.picks).toHaveLength(1)
    expect(record.picks[0]?.body.toString()).toBe(chatBody)
    expect(record.picks[0]?.headers[':path']).toBe('/v1/chat/completions')
    expect(record.picks[0]?.headers['content-type']).toBe('application/json')
    expect(record.picks[0]?.subset).toBeNull()
    expect(record.responses).toEqual([
      expect.objectContaining({ status: 200, served: '10.0.0.1:8000' }),
    ])
    expect(record.chunks.map((item) => item.chunk.toString())).toEqual(sse)
    expect(record.chunks.map((item) => item.endOfStream)).toEqual([false, false, false, true])
    expect(await record.closed).toBe('completed')
    expect(record.closes).toEqual(['completed'])
  })

  it('re-emits a body over 150 KB in chunks of at most 62,000 bytes', async () => {
    const big = Buffer.alloc(200_123, 'x')
    const result = await replayEnvoy(harness.client, { body: big, chunkSize: 16_384 })
    expect(result.streamedRequestChunks).toEqual([
      { bytes: 62_000, endOfStream: false },
      { bytes: 62_000, endOfStream: false },
      { bytes: 62_000, endOfStream: false },
      { bytes: 14_123, endOfStream: true },
    ])
    expect(result.streamedRequestBody.equals(big)).toBe(true)
    expect(result.setHeaders['content-length']).toBe('200123')
  })

  it('passes the subset hint on, as a list and as a comma-joined string', async () => {
    await replayEnvoy(harness.client, {
      body: chatBody,
      subset: ['10.0.0.2:8000', '10.0.0.3:8000'],
    })
    expect(harness.last().picks[0]?.subset).toEqual(['10.0.0.2:8000', '10.0.0.3:8000'])
    await replayEnvoy(harness.client, { body: chatBody, subset: '10.0.0.4:8000, 10.0.0.5:8000' })
    expect(harness.last().picks[0]?.subset).toEqual(['10.0.0.4:8000', '10.0.0.5:8000'])
    await replayEnvoy(harness.client, { body: chatBody, subset: [] })
    expect(harness.last().picks[0]?.subset).toEqual([])
  })

  it('answers request trailers after the deferred headers and body, in order', async () => {
    const result = await replayEnvoy(harness.client, {
      body: chatBody,
      trailers: { 'x-checksum': 'abc' },
    })
    const kinds = result.responses.flatMap((item) =>
      item.response ? [item.response.response] : [],
    )
    expect(kinds).toEqual(['request_headers', 'request_body', 'request_trailers'])
    expect(result.streamedRequestBody.toString()).toBe(chatBody)
    // The trailers end the body, so the re-emitted body does not end the stream.
    expect(result.streamedRequestChunks.at(-1)?.endOfStream).toBe(false)
  })

  it('picks at once for a request without a body', async () => {
    const result = await replayEnvoy(harness.client, {
      requestHeaders: { ':method': 'GET', ':path': '/v1/models' },
      body: null,
      response: { status: 200, served: null, chunks: ['{"data":[]}'] },
    })
    expect(result.responses[0]?.response?.response).toBe('request_headers')
    expect(result.destination).toBe('10.0.0.1:8000,10.0.0.2:8000')
    expect(result.setHeaders['content-length']).toBeUndefined()
    expect(result.streamedRequestChunks).toEqual([])
    const record = harness.last()
    expect(record.picks[0]?.body.length).toBe(0)
    expect(record.responses[0]?.served).toBeNull()
    expect(await record.closed).toBe('completed')
  })

  it('lets the replayed response depend on the routing answer (the served fallback)', async () => {
    const result = await replayEnvoy(harness.client, {
      body: chatBody,
      response: (routed) => ({
        status: 200,
        served: (routed.destination ?? '').split(',')[1] ?? null,
        chunks: ['{"id":"x"}'],
      }),
    })
    expect(result.echoedResponseBody.toString()).toBe('{"id":"x"}')
    expect(harness.last().responses[0]?.served).toBe('10.0.0.2:8000')
  })

  it('completes a response that ends with its trailers', async () => {
    await replayEnvoy(harness.client, {
      body: chatBody,
      response: {
        status: 200,
        served: '10.0.0.1:8000',
        chunks: sse,
        trailers: { 'grpc-status': '0' },
      },
    })
    const record = harness.last()
    expect(record.chunks.every((item) => !item.endOfStream)).toBe(true)
    expect(await record.closed).toBe('completed')
    expect(record.closes).toEqual(['completed'])
  })
})

describe('the stream on its own', () => {
  /** The stream's queue runs on promise jobs; a macrotask later they have all run. */
  const settled = () => new Promise<void>((resolve) => setImmediate(resolve))

  function ownStream(answer?: PickAnswer) {
    const own = recordingEndpointPicker(answer)
    const sent: ExtProcResponse[] = []
    const stream = openExtProcStream({
      picker: own.picker,
      maxBodyBytes: 1000,
      log: () => {},
      sink: { send: (response) => sent.push(response), end: () => {}, fail: () => {} },
    })
    return { own, sent, stream, record: () => own.exchanges[0] as RecordedExchange }
  }
  const headers: ExtProcRequest = { request: 'request_headers', request_headers: {} }
  const body = (text: string, end: boolean): ExtProcRequest => ({
    request: 'request_body',
    request_body: { body: Buffer.from(text), end_of_stream: end },
  })

  it('sends nothing for the headers until the body has ended, then the route first', async () => {
    const { own, sent, stream } = ownStream()
    stream.receive(headers)
    stream.receive(body('{"a":', false))
    await settled()
    expect(sent).toEqual([])
    expect(own.exchanges[0]?.picks).toEqual([])
    stream.receive(body('1}', true))
    await settled()
    expect(own.exchanges[0]?.picks[0]?.body.toString()).toBe('{"a":1}')
    expect(sent.map((response) => Object.keys(response)[0])).toEqual([
      'request_headers',
      'request_body',
    ])
    stream.halfClosed()
    await settled()
    expect(own.exchanges[0]?.closes).toEqual(['aborted'])
  })

  it('completes, without aborting, a response whose end is still queued at the half-close', async () => {
    const { stream, record } = ownStream()
    stream.receive(headers)
    stream.receive(body('{}', true))
    stream.receive({ request: 'response_headers', response_headers: {} })
    stream.receive({
      request: 'response_body',
      response_body: { body: Buffer.from('{}'), end_of_stream: true },
    })
    stream.halfClosed()
    await settled()
    expect(record().closes).toEqual(['completed'])
    expect(record().signal.aborted).toBe(false)
  })

  it('aborts a waiting pick at the half-close, and closes once it settles', async () => {
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const { sent, stream, record } = ownStream(async (input, signal) => {
      await held
      return pickFirstTwo(input, signal)
    })
    stream.receive(headers)
    stream.receive(body('{}', true))
    await settled()
    stream.halfClosed()
    expect(record().signal.aborted).toBe(true)
    expect(record().closes).toEqual([])
    release()
    await settled()
    expect(record().closes).toEqual(['aborted'])
    expect(sent.map((response) => Object.keys(response)[0])).toEqual([
      'request_headers',
      'request_body',
    ])
  })
})
