import { status as GrpcStatus } from '@grpc/grpc-js'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { replayEnvoy } from '../../../support/ext-proc-client.ts'
import {
  replayChatBody as chatBody,
  type ExtProcHarness,
  replaySseChunks as sse,
  startExtProcHarness,
} from '../../../support/ext-proc-harness.ts'
import { pickFirstTwo } from '../../../support/recording-endpoint-picker.ts'

let harness: ExtProcHarness
beforeAll(async () => {
  harness = await startExtProcHarness(1024 * 1024)
})
afterAll(() => harness.close())
beforeEach(() => harness.answer(pickFirstTwo))

describe('refusals and failures', () => {
  it('turns a refusal into an ImmediateResponse with its status, headers and JSON body', async () => {
    for (const status of [429, 503]) {
      const body = JSON.stringify({
        error: { message: 'no', type: 'saturated', param: null, code: 'saturated' },
      })
      harness.answer(() => ({ kind: 'refused', status, body, headers: { 'retry-after': '2' } }))
      const result = await replayEnvoy(harness.client, { body: chatBody })
      expect(result.immediate).toEqual({
        status,
        headers: { 'content-type': 'application/json', 'retry-after': '2' },
        body,
      })
      expect(result.destination).toBeNull()
      expect(result.grpcError).toBeNull()
      expect(await harness.last().closed).toBe('aborted')
      expect(harness.last().closes).toEqual(['aborted'])
    }
  })

  it('ends the call with a gRPC error when the pick fails, so the gateway applies its failure mode', async () => {
    harness.answer(() => Promise.reject(new Error('pool exploded')))
    const internal = await replayEnvoy(harness.client, { body: chatBody })
    expect(internal.grpcError?.code).toBe(GrpcStatus.INTERNAL)
    expect(internal.grpcError?.details).toContain('pool exploded')
    expect(harness.last().closes).toEqual(['aborted'])
    harness.answer(() => {
      throw new KinfError('upstream_unavailable', 'no pool yet')
    })
    const unavailable = await replayEnvoy(harness.client, { body: chatBody })
    expect(unavailable.grpcError?.code).toBe(GrpcStatus.UNAVAILABLE)
    expect(harness.logged.some((line) => line.includes('no pool yet'))).toBe(true)
  })

  it('answers an oversized body 413 without a pick', async () => {
    const result = await replayEnvoy(harness.client, {
      body: Buffer.alloc(1024 * 1024 + 1, 'a'),
      chunkSize: 65_536,
    })
    expect(result.immediate?.status).toBe(413)
    expect(JSON.parse(result.immediate?.body ?? '{}').error.type).toBe('invalid_request_error')
    expect(harness.last().picks).toEqual([])
    expect(await harness.last().closed).toBe('aborted')
  })

  it('rejects out-of-order messages with INVALID_ARGUMENT and keeps serving', async () => {
    const early = harness.client.open()
    early.send({ request_body: { body: Buffer.from('{}'), end_of_stream: true } })
    await early.until(() => early.finished())
    expect(early.received).toEqual([
      expect.objectContaining({ kind: 'error', code: GrpcStatus.INVALID_ARGUMENT }),
    ])
    expect(await harness.last().closed).toBe('aborted')

    const empty = harness.client.open()
    empty.send({})
    await empty.until(() => empty.finished())
    expect(empty.received[0]?.code).toBe(GrpcStatus.INVALID_ARGUMENT)

    const responseFirst = harness.client.open()
    responseFirst.send({ response_headers: { headers: { headers: [] } } })
    await responseFirst.until(() => responseFirst.finished())
    expect(responseFirst.received[0]?.code).toBe(GrpcStatus.INVALID_ARGUMENT)

    const after = await replayEnvoy(harness.client, { body: chatBody })
    expect(after.destination).toBe('10.0.0.1:8000,10.0.0.2:8000')
  })
})

describe('the end of a stream', () => {
  it('closes aborted, once, when the gateway cancels mid-response', async () => {
    const result = await replayEnvoy(harness.client, {
      body: chatBody,
      response: { status: 200, served: '10.0.0.1:8000', chunks: sse, cancelAfterChunks: 2 },
    })
    expect(result.grpcError?.code).toBe(GrpcStatus.CANCELLED)
    const record = harness.last()
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
    harness.answer(async (_input, signal) => {
      await released
      return {
        kind: 'refused',
        status: 503,
        body: signal.aborted ? 'aborted' : 'not aborted',
        headers: {},
      }
    })
    const count = harness.recording.exchanges.length + 1
    const call = harness.client.open()
    call.send({ request_headers: { headers: { headers: [] }, end_of_stream: true } })
    const record = await harness.recording.opened(count)
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
    await replayEnvoy(harness.client, { body: chatBody })
    const record = harness.last()
    expect(await record.closed).toBe('aborted')
    expect(record.signal.aborted).toBe(true)
  })
})
