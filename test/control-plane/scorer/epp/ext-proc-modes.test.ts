import { status as GrpcStatus } from '@grpc/grpc-js'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { readExtProcModes } from '../../../../control-plane/scorer/epp/ext-proc-modes.ts'
import { replayEnvoy } from '../../../support/ext-proc-client.ts'
import {
  replayChatBody as chatBody,
  type ExtProcHarness,
  startExtProcHarness,
} from '../../../support/ext-proc-harness.ts'
import { pickFirstTwo } from '../../../support/recording-endpoint-picker.ts'

let harness: ExtProcHarness
beforeAll(async () => {
  harness = await startExtProcHarness(1024 * 1024)
})
afterAll(() => harness.close())
beforeEach(() => harness.answer(pickFirstTwo))

describe('BUFFERED bodies', () => {
  const response = { status: 200, served: '10.0.0.2:8000', chunks: ['{"choices":[]}'] }

  it('answers the body with CONTINUE after the deferred route when the body does not wait', async () => {
    const result = await replayEnvoy(harness.client, {
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
    expect(harness.last().chunks).toEqual([
      { chunk: Buffer.from('{"choices":[]}'), endOfStream: true },
    ])
    expect(await harness.last().closed).toBe('completed')
  })

  it('routes in the body answer when the data plane waits for the headers answer', async () => {
    const result = await replayEnvoy(harness.client, {
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
    expect(harness.last().picks[0]?.body.toString()).toBe(chatBody)
  })
})

describe('the modes a stream announces', () => {
  it('reads protocol_config, FULL_DUPLEX_STREAMED without one', () => {
    expect(readExtProcModes(undefined)).toEqual({
      request: 'duplex',
      bodyWaitsForHeaders: false,
      response: 'duplex',
      unsupported: null,
    })
    expect(readExtProcModes({})).toEqual({
      request: 'none',
      bodyWaitsForHeaders: false,
      response: 'none',
      unsupported: null,
    })
    expect(
      readExtProcModes({ request_body_mode: 'BUFFERED_PARTIAL', response_body_mode: 'STREAMED' }),
    ).toEqual({
      request: 'buffered',
      bodyWaitsForHeaders: true,
      response: 'other',
      unsupported: null,
    })
    expect(readExtProcModes({ request_body_mode: 'STREAMED' }).unsupported).toBe('STREAMED')
  })

  it('picks on the headers when no request body will come (NONE)', async () => {
    const result = await replayEnvoy(harness.client, {
      body: null,
      protocolConfig: { response_body_mode: 'FULL_DUPLEX_STREAMED' },
      response: { status: 200, served: '10.0.0.1:8000', chunks: ['{}'] },
    })
    expect(result.destination).toBe('10.0.0.1:8000,10.0.0.2:8000')
    expect(result.echoedResponseBody.toString()).toBe('{}')
    expect(await harness.last().closed).toBe('completed')
  })

  it('completes at the stream end when no response body will come', async () => {
    await replayEnvoy(harness.client, {
      body: chatBody,
      protocolConfig: {
        request_body_mode: 'BUFFERED',
        send_body_without_waiting_for_header_response: true,
      },
      response: { status: 200, served: '10.0.0.1:8000', chunks: ['{"id":"x"}'] },
    })
    const record = harness.last()
    expect(record.chunks).toEqual([])
    expect(await record.closed).toBe('completed')
  })

  it('answers a buffered body that trailers follow, then the trailers', async () => {
    const result = await replayEnvoy(harness.client, {
      body: chatBody,
      trailers: { 'x-t': '1' },
      protocolConfig: { request_body_mode: 'BUFFERED', response_body_mode: 'BUFFERED' },
    })
    const kinds = result.responses.flatMap((item) =>
      item.response ? [item.response.response] : [],
    )
    expect(kinds).toEqual(['request_headers', 'request_body', 'request_trailers'])
    expect(result.destination).toBe('10.0.0.1:8000,10.0.0.2:8000')
    expect(harness.last().picks[0]?.body.toString()).toBe(chatBody)
  })

  it('refuses a STREAMED request body with UNIMPLEMENTED, so the gateway fails open or closed', async () => {
    const result = await replayEnvoy(harness.client, {
      body: chatBody,
      protocolConfig: {
        request_body_mode: 'STREAMED',
        send_body_without_waiting_for_header_response: true,
      },
    })
    expect(result.grpcError?.code).toBe(GrpcStatus.UNIMPLEMENTED)
    expect(harness.last().picks).toEqual([])
    expect(harness.last().closes).toEqual(['aborted'])
  })
})
