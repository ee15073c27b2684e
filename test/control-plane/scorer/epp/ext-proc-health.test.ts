import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ExtProcServer,
  startExtProcServer,
} from '../../../../control-plane/scorer/epp/ext-proc-server.ts'
import { createExtProcClient, type ExtProcClient } from '../../../support/ext-proc-client.ts'
import {
  type RecordingEndpointPicker,
  recordingEndpointPicker,
} from '../../../support/recording-endpoint-picker.ts'

const extProc = 'envoy.service.ext_proc.v3.ExternalProcessor'
let recording: RecordingEndpointPicker
let server: ExtProcServer
let client: ExtProcClient

beforeAll(async () => {
  recording = recordingEndpointPicker()
  server = await startExtProcServer({
    host: '127.0.0.1',
    port: 0,
    tls: null,
    picker: recording.picker,
    log: () => {},
  })
  client = createExtProcClient(`127.0.0.1:${server.port}`)
})
afterAll(async () => {
  client.close()
  await server.close(0)
})

async function statuses(): Promise<Record<string, string | number>> {
  const names = ['', 'liveness', 'readiness', extProc]
  const replies = await Promise.all(names.map((name) => client.check(name)))
  return Object.fromEntries(names.map((name, index) => [name, plain(replies[index])]))
}

function plain(reply: string | ServiceError | undefined): string | number {
  return typeof reply === 'string' ? reply : (reply?.code ?? 'none')
}

describe('the gRPC health service', () => {
  it('reports readiness and the ext_proc service by picker.ready() and setServing', async () => {
    expect(await statuses()).toEqual({
      '': 'SERVING',
      liveness: 'SERVING',
      readiness: 'SERVING',
      [extProc]: 'SERVING',
    })
    recording.setReady(false)
    expect(await statuses()).toEqual({
      '': 'SERVING',
      liveness: 'SERVING',
      readiness: 'NOT_SERVING',
      [extProc]: 'NOT_SERVING',
    })
    recording.setReady(true)
    server.setServing(false)
    expect(await statuses()).toEqual({
      '': 'SERVING',
      liveness: 'SERVING',
      readiness: 'NOT_SERVING',
      [extProc]: 'NOT_SERVING',
    })
    server.setServing(true)
    expect((await statuses()).readiness).toBe('SERVING')
  })

  it('answers NOT_FOUND for a service it does not know', async () => {
    expect(plain(await client.check('no.such.Service'))).toBe(GrpcStatus.NOT_FOUND)
  })

  it('streams the current status, then its changes, to a watcher', async () => {
    const seen = await client.watch(extProc, 2, () => server.setServing(false))
    expect(seen).toEqual(['SERVING', 'NOT_SERVING'])
    server.setServing(true)
    expect(await client.watch('no.such.Service', 1)).toEqual(['SERVICE_UNKNOWN'])
  })
})
