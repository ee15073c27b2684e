import { status as GrpcStatus } from '@grpc/grpc-js'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { ExtProcResponse } from '../../../../control-plane/scorer/epp/ext-proc-messages.ts'
import {
  type ExtProcServer,
  startExtProcServer,
} from '../../../../control-plane/scorer/epp/ext-proc-server.ts'
import { openExtProcStream } from '../../../../control-plane/scorer/epp/ext-proc-stream.ts'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import {
  createExtProcClient,
  type ExtProcClient,
  replayEnvoy,
} from '../../../support/ext-proc-client.ts'
import {
  type PickAnswer,
  pickFirstTwo,
  type RecordingEndpointPicker,
  recordingEndpointPicker,
} from '../../../support/recording-endpoint-picker.ts'

let answer: PickAnswer = pickFirstTwo
let recording: RecordingEndpointPicker
let server: ExtProcServer
let client: ExtProcClient
const logged: string[] = []

beforeAll(async () => {
  recording = recordingEndpointPicker((input, signal) => answer(input, signal))
  server = await startExtProcServer({
    host: '127.0.0.1',
    port: 0,
    tls: null,
    picker: recording.picker,
    maxBodyBytes: 1024 * 1024,
    log: (message) => logged.push(message),
  })
  client = createExtProcClient(`127.0.0.1:${server.port}`)
})
afterAll(async () => {
  client.close()
  await server.close(0)
})
beforeEach(() => {
  answer = pickFirstTwo
})

const chatBody = JSON.stringify({
  model: 'llama',
  stream: true,
  messages: [{ role: 'user', content: 'hello' }],
})
const sse = [
  'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n',
  'data: {"choices":[{"delta":{"content":"lo"}}]}\n\n',
  'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}\n\n',
  'data: [DONE]\n\n',
]

function lastExchange() {
  const record = recording.exchanges.at(-1)
  if (!record) throw new Error('no exchange')
  return record
}

describe('a streamed chat request (FULL_DUPLEX_STREAMED)', () => {
  it('defers the headers answer to the body end, routes by header and metadata, re-emits the body', async () => {
    const result = await replayEnvoy(client, {
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
    const record = lastExchange()
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
    const result = await replayEnvoy(client, { body: big, chunkSize: 16_384 })
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
    await replayEnvoy(client, { body: chatBody, subset: ['10.0.0.2:8000', '10.0.0.3:8000'] })
    expect(lastExchange().picks[0]?.subset).toEqual(['10.0.0.2:8000', '10.0.0.3:8000'])
    await replayEnvoy(client, { body: chatBody, subset: '10.0.0.4:8000, 10.0.0.5:8000' })
    expect(lastExchange().picks[0]?.subset).toEqual(['10.0.0.4:8000', '10.0.0.5:8000'])
    await replayEnvoy(client, { body: chatBody, subset: [] })
    expect(lastExchange().picks[0]?.subset).toEqual([])
  })

  it('answers request trailers after the deferred headers and body, in order', async () => {
    const result = await replayEnvoy(client, { body: chatBody, trailers: { 'x-checksum': 'abc' } })
    const kinds = result.responses.flatMap((item) =>
      item.response ? [item.response.response] : [],
    )
    expect(kinds).toEqual(['request_headers', 'request_body', 'request_trailers'])
    expect(result.streamedRequestBody.toString()).toBe(chatBody)
    // The trailers end the body, so the re-emitted body does not end the stream.
    expect(result.streamedRequestChunks.at(-1)?.endOfStream).toBe(false)
  })

  it('picks at once for a request without a body', async () => {
    const result = await replayEnvoy(client, {
      requestHeaders: { ':method': 'GET', ':path': '/v1/models' },
      body: null,
      response: { status: 200, served: null, chunks: ['{"data":[]}'] },
    })
    expect(result.responses[0]?.response?.response).toBe('request_headers')
    expect(result.destination).toBe('10.0.0.1:8000,10.0.0.2:8000')
    expect(result.setHeaders['content-length']).toBeUndefined()
    expect(result.streamedRequestChunks).toEqual([])
    const record = lastExchange()
    expect(record.picks[0]?.body.length).toBe(0)
    expect(record.responses[0]?.served).toBeNull()
    expect(await record.closed).toBe('completed')
  })

  it('lets the replayed response depend on the routing answer (the served fallback)', async () => {
    const result = await replayEnvoy(client, {
      body: chatBody,
      response: (routed) => ({
        status: 200,
        served: (routed.destination ?? '').split(',')[1] ?? null,
        chunks: ['{"id":"x"}'],
      }),
    })
    expect(result.echoedResponseBody.toString()).toBe('{"id":"x"}')
    expect(lastExchange().responses[0]?.served).toBe('10.0.0.2:8000')
  })

  it('completes a response that ends with its trailers', async () => {
    await replayEnvoy(client, {
      body: chatBody,
      response: {
        status: 200,
        served: '10.0.0.1:8000',
        chunks: sse,
        trailers: { 'grpc-status': '0' },
      },
    })
    const record = lastExchange()
    expect(record.chunks.every((item) => !item.endOfStream)).toBe(true)
    expect(await record.closed).toBe('completed')
    expect(record.closes).toEqual(['completed'])
  })
})

describe('BUFFERED bodies', () => {
  const response = { status: 200, served: '10.0.0.2:8000', chunks: ['{"choices":[]}'] }

  it('answers the body with CONTINUE after the deferred route when the body does not wait', async () => {
    const result = await replayEnvoy(client, {
      body: chatBody,
      chunkSize: 1 << 20,
      protocolConfig: {
        request_body_mode: 'BUFFERED',
        response_body_mode: 'BUFFERED',
        send_body_without_waiting_for_header_response: true,
      },
      response,
    })
    const kinds = result.responses.flatMap((item) =>
      item.response ? [item.response.response] : [],
    )
    expect(kinds).toEqual(['request_headers', 'request_body', 'response_headers', 'response_body'])
    expect(result.destination).toBe('10.0.0.1:8000,10.0.0.2:8000')
    expect(result.streamedRequestChunks).toEqual([])
    expect(result.setHeaders['content-length']).toBeUndefined()
    expect(result.echoedResponseBody.length).toBe(0)
    expect(lastExchange().chunks).toEqual([
      { chunk: Buffer.from('{"choices":[]}'), endOfStream: true },
    ])
    expect(await lastExchange().closed).toBe('completed')
  })

  it('routes in the body answer when the data plane waits for the headers answer', async () => {
    const result = await replayEnvoy(client, {
      body: chatBody,
      chunkSize: 1 << 20,
      protocolConfig: { request_body_mode: 'BUFFERED', response_body_mode: 'BUFFERED' },
      response,
    })
    const first = result.responses[0]?.response
    expect(first?.request_headers?.response?.header_mutation).toBeUndefined()
    expect(result.responses[1]?.response?.response).toBe('request_body')
    expect(result.destination).toBe('10.0.0.1:8000,10.0.0.2:8000')
    expect(result.metadataDestination).toBe(result.destination)
    expect(lastExchange().picks[0]?.body.toString()).toBe(chatBody)
  })
})

describe('refusals and failures', () => {
  it('turns a refusal into an ImmediateResponse with its status, headers and JSON body', async () => {
    for (const status of [429, 503]) {
      const body = JSON.stringify({
        error: { message: 'no', type: 'saturated', param: null, code: 'saturated' },
      })
      answer = () => ({ kind: 'refused', status, body, headers: { 'retry-after': '2' } })
      const result = await replayEnvoy(client, { body: chatBody })
      expect(result.immediate).toEqual({
        status,
        headers: { 'content-type': 'application/json', 'retry-after': '2' },
        body,
      })
      expect(result.destination).toBeNull()
      expect(result.grpcError).toBeNull()
      expect(await lastExchange().closed).toBe('aborted')
      expect(lastExchange().closes).toEqual(['aborted'])
    }
  })

  it('ends the call with a gRPC error when the pick fails, so the gateway applies its failure mode', async () => {
    answer = () => Promise.reject(new Error('pool exploded'))
    const internal = await replayEnvoy(client, { body: chatBody })
    expect(internal.grpcError?.code).toBe(GrpcStatus.INTERNAL)
    expect(internal.grpcError?.details).toContain('pool exploded')
    expect(lastExchange().closes).toEqual(['aborted'])
    answer = () => {
      throw new KinfError('upstream_unavailable', 'no pool yet')
    }
    const unavailable = await replayEnvoy(client, { body: chatBody })
    expect(unavailable.grpcError?.code).toBe(GrpcStatus.UNAVAILABLE)
    expect(logged.some((line) => line.includes('no pool yet'))).toBe(true)
  })

  it('answers an oversized body 413 without a pick', async () => {
    const result = await replayEnvoy(client, {
      body: Buffer.alloc(1024 * 1024 + 1, 'a'),
      chunkSize: 65_536,
    })
    expect(result.immediate?.status).toBe(413)
    expect(JSON.parse(result.immediate?.body ?? '{}').error.type).toBe('invalid_request_error')
    expect(lastExchange().picks).toEqual([])
    expect(await lastExchange().closed).toBe('aborted')
  })

  it('rejects out-of-order messages with INVALID_ARGUMENT and keeps serving', async () => {
    const early = client.open()
    early.send({ request_body: { body: Buffer.from('{}'), end_of_stream: true } })
    await early.until(() => early.finished())
    expect(early.received).toEqual([
      expect.objectContaining({ kind: 'error', code: GrpcStatus.INVALID_ARGUMENT }),
    ])
    expect(await lastExchange().closed).toBe('aborted')

    const empty = client.open()
    empty.send({})
    await empty.until(() => empty.finished())
    expect(empty.received[0]?.code).toBe(GrpcStatus.INVALID_ARGUMENT)

    const responseFirst = client.open()
    responseFirst.send({ response_headers: { headers: { headers: [] } } })
    await responseFirst.until(() => responseFirst.finished())
    expect(responseFirst.received[0]?.code).toBe(GrpcStatus.INVALID_ARGUMENT)

    const after = await replayEnvoy(client, { body: chatBody })
    expect(after.destination).toBe('10.0.0.1:8000,10.0.0.2:8000')
  })
})

describe('the end of a stream', () => {
  it('closes aborted, once, when the gateway cancels mid-response', async () => {
    const result = await replayEnvoy(client, {
      body: chatBody,
      response: { status: 200, served: '10.0.0.1:8000', chunks: sse, cancelAfterChunks: 2 },
    })
    expect(result.grpcError?.code).toBe(GrpcStatus.CANCELLED)
    const record = lastExchange()
    expect(await record.closed).toBe('aborted')
    expect(record.chunks).toHaveLength(2)
    expect(record.signal.aborted).toBe(true)
    expect(record.closes).toEqual(['aborted'])
  })

  it('aborts a waiting pick when the gateway cancels, and closes after it settles', async () => {
    let release: (value: null) => void = () => {}
    const released = new Promise<null>((resolve) => {
      release = resolve
    })
    answer = async (_input, signal) => {
      await released
      return {
        kind: 'refused',
        status: 503,
        body: signal.aborted ? 'aborted' : 'not aborted',
        headers: {},
      }
    }
    const count = recording.exchanges.length + 1
    const call = client.open()
    call.send({ request_headers: { headers: { headers: [] }, end_of_stream: true } })
    const record = await recording.opened(count)
    await new Promise<void>((resolve) => {
      const poll = (): void => (record.picks.length > 0 ? resolve() : void setImmediate(poll))
      poll()
    })
    call.cancel()
    await new Promise<void>((resolve) => record.signal.addEventListener('abort', () => resolve()))
    expect(record.closes).toEqual([])
    release(null)
    expect(await record.closed).toBe('aborted')
    expect(record.closes).toEqual(['aborted'])
  })

  it('closes aborted when the gateway half-closes before the response', async () => {
    await replayEnvoy(client, { body: chatBody })
    const record = lastExchange()
    expect(await record.closed).toBe('aborted')
    expect(record.signal.aborted).toBe(true)
  })
})

describe('the stream on its own', () => {
  /** The stream's queue runs on promise jobs; a macrotask later they have all run. */
  const settled = () => new Promise<void>((resolve) => setImmediate(resolve))

  it('sends nothing for the headers until the body has ended, then the route first', async () => {
    const own = recordingEndpointPicker()
    const sent: ExtProcResponse[] = []
    const stream = openExtProcStream({
      picker: own.picker,
      maxBodyBytes: 1000,
      log: () => {},
      sink: { send: (response) => sent.push(response), end: () => {}, fail: () => {} },
    })
    stream.receive({ request: 'request_headers', request_headers: { headers: { headers: [] } } })
    stream.receive({ request: 'request_body', request_body: { body: Buffer.from('{"a":') } })
    await settled()
    expect(sent).toEqual([])
    expect(own.exchanges[0]?.picks).toEqual([])
    stream.receive({
      request: 'request_body',
      request_body: { body: Buffer.from('1}'), end_of_stream: true },
    })
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
})
