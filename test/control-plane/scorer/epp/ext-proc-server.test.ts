import { readFileSync } from 'node:fs'
import { status as GrpcStatus } from '@grpc/grpc-js'
import { afterEach, describe, expect, it } from 'vitest'
import {
  type ExtProcServer,
  startExtProcServer,
} from '../../../../control-plane/scorer/epp/ext-proc-server.ts'
import {
  createExtProcClient,
  type ExtProcClient,
  replayEnvoy,
} from '../../../support/ext-proc-client.ts'
import { recordingEndpointPicker } from '../../../support/recording-endpoint-picker.ts'

const fixture = (name: string) =>
  readFileSync(new URL(`../../../fixtures/epp-tls/${name}`, import.meta.url), 'utf8')
const certPem = fixture('cert.pem')
const keyPem = fixture('key.pem')
const body = JSON.stringify({ model: 'llama', messages: [{ role: 'user', content: 'hi' }] })

const opened: { server: ExtProcServer; clients: ExtProcClient[] }[] = []
afterEach(async () => {
  for (const { server, clients } of opened.splice(0)) {
    for (const client of clients) client.close()
    await server.close(0)
  }
})

async function start(tls: boolean, healthPort: number | null = null) {
  const recording = recordingEndpointPicker()
  const server = await startExtProcServer({
    host: '127.0.0.1',
    port: 0,
    healthPort,
    tls: tls ? { certPem, keyPem } : null,
    picker: recording.picker,
    log: () => {},
  })
  const entry = { server, clients: [] as ExtProcClient[] }
  opened.push(entry)
  const client = (trust: boolean) => {
    const made = createExtProcClient(`127.0.0.1:${server.port}`, trust ? { caPem: certPem } : null)
    entry.clients.push(made)
    return made
  }
  return { server, recording, client }
}

describe('the Endpoint Picker server', () => {
  it('serves a pick over TLS to a client that trusts its certificate', async () => {
    const { client, recording } = await start(true)
    const result = await replayEnvoy(client(true), { body })
    expect(result.destination).toBe('10.0.0.1:8000,10.0.0.2:8000')
    expect(recording.exchanges[0]?.picks[0]?.body.toString()).toBe(body)
  })

  it('answers health in plaintext on its own port beside a TLS one, as kubelet probes need', async () => {
    const { server } = await start(true, 0)
    expect(server.healthPort).not.toBeNull()
    const plain = createExtProcClient(`127.0.0.1:${server.healthPort}`, null)
    opened[opened.length - 1]?.clients.push(plain)
    expect(await plain.check('liveness')).toBe('SERVING')
    expect(await plain.check('readiness')).toBe('SERVING')
    server.setServing(false)
    expect(await plain.check('readiness')).toBe('NOT_SERVING')
    // The health port serves nothing else.
    const result = await replayEnvoy(plain, { body })
    expect(result.grpcError?.code).toBe(GrpcStatus.UNIMPLEMENTED)
  })

  it('refuses a plaintext client on the TLS port', async () => {
    const { client } = await start(true)
    const result = await replayEnvoy(client(false), { body })
    expect(result.destination).toBeNull()
    expect(result.grpcError?.code).toBe(GrpcStatus.UNAVAILABLE)
  })

  it('serves plaintext without TLS, and closes with its streams done', async () => {
    const { server, client, recording } = await start(false)
    const result = await replayEnvoy(client(false), {
      body,
      response: { status: 200, served: '10.0.0.2:8000', chunks: ['{"id":"x"}'] },
    })
    expect(result.echoedResponseBody.toString()).toBe('{"id":"x"}')
    expect(recording.exchanges[0]?.closes).toEqual(['completed'])
    await server.close()
    const after = await replayEnvoy(client(false), { body })
    expect(after.grpcError?.code).toBe(GrpcStatus.UNAVAILABLE)
  })
})
