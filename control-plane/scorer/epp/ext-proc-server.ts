/**
 * The Endpoint Picker's gRPC server: Envoy's ext_proc service (one stream per HTTP request,
 * ext-proc-stream.ts) and the gRPC health service, on one port, with or without TLS.
 * Gateways dial an EPP over TLS without verifying it (docs: Istio's insecureSkipVerify,
 * EAIGW's empty validation context), so the server presents a certificate and asks for none.
 */
import {
  status as GrpcStatus,
  Server,
  ServerCredentials,
  type ServerDuplexStream,
  type ServiceError,
} from '@grpc/grpc-js'
import type { EndpointPicker } from './endpoint-picker.ts'
import { createExtProcHealth } from './ext-proc-health.ts'
import type { ExtProcRequest, ExtProcResponse } from './ext-proc-messages.ts'
import { extProcProtos } from './ext-proc-protos.ts'
import { openExtProcStream } from './ext-proc-stream.ts'

/** The default bound on a request body the picker reads (a larger one is answered 413). */
export const defaultMaxBodyBytes = 16 * 1024 * 1024
const defaultGraceMs = 10_000

export interface ExtProcServerOptions {
  host: string
  /** 0 for any free port. */
  port: number
  tls: { certPem: string | Buffer; keyPem: string | Buffer } | null
  picker: EndpointPicker
  /**
   * Also serve the health service alone, in plaintext, on this port (0: a free one): the
   * kubelet's gRPC probes and some gateways' health checks (GKE's, on 9003) speak no TLS.
   */
  healthPort?: number | null
  maxBodyBytes?: number
  log: (message: string) => void
}

export interface ExtProcServer {
  /** The bound port. */
  port: number
  /** The plaintext health port (options.healthPort); null when there is none. */
  healthPort: number | null
  /**
   * Stops serving (health NOT_SERVING), lets the open streams finish for up to graceMs,
   * then cuts them.
   */
  close(graceMs?: number): Promise<void>
  /** false: readiness and the ext_proc service report NOT_SERVING (draining). */
  setServing(serving: boolean): void
}

function credentials(tls: ExtProcServerOptions['tls']): ServerCredentials {
  if (tls === null) return ServerCredentials.createInsecure()
  const pair = { cert_chain: Buffer.from(tls.certPem), private_key: Buffer.from(tls.keyPem) }
  return ServerCredentials.createSsl(null, [pair], false)
}

function bind(server: Server, address: string, creds: ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, creds, (error, port) => (error ? reject(error) : resolve(port)))
  })
}

export async function startExtProcServer(options: ExtProcServerOptions): Promise<ExtProcServer> {
  const { picker, log } = options
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes
  const protos = extProcProtos()
  // A BUFFERED body comes in one message: let one a little over the bound arrive, to be
  // answered 413, rather than fail the call for its size.
  const server = new Server({ 'grpc.max_receive_message_length': 2 * maxBodyBytes + 1024 * 1024 })
  const health = createExtProcHealth(picker)

  function process(call: ServerDuplexStream<ExtProcRequest, ExtProcResponse>): void {
    let stream: ReturnType<typeof openExtProcStream>
    try {
      stream = openExtProcStream({
        picker,
        maxBodyBytes,
        log,
        sink: {
          send: (response) => call.write(response),
          end: () => call.end(),
          // grpc-js's way to end a server stream with a status: its own error listener.
          fail: (code, details) => call.emit('error', { code, details } as Partial<ServiceError>),
        },
      })
    } catch (error) {
      log(`ext_proc: the picker could not open an exchange: ${(error as Error).message}`)
      call.emit('error', { code: GrpcStatus.INTERNAL, details: 'the picker failed' })
      return
    }
    call.on('data', (message: ExtProcRequest) => stream.receive(message))
    call.on('end', () => stream.halfClosed())
    call.on('cancelled', () => stream.cancelled())
  }

  server.addService(protos.externalProcessor.service, { Process: process })
  server.addService(protos.health.service, health.implementation)
  const host = options.host.includes(':') ? `[${options.host}]` : options.host
  const port = await bind(server, `${host}:${options.port}`, credentials(options.tls))
  log(`ext_proc: Endpoint Picker listening on ${host}:${port}${options.tls ? ' (TLS)' : ''}`)
  const healthServer = await startHealthOnly(host, options.healthPort ?? null, health).catch(
    (error: unknown) => {
      server.forceShutdown()
      throw error
    },
  )

  let closing: Promise<void> | undefined
  return {
    port,
    healthPort: healthServer?.port ?? null,
    setServing: (serving) => health.setServing(serving),
    close(graceMs = defaultGraceMs) {
      closing ??= new Promise<void>((resolve) => {
        health.setServing(false)
        health.stop()
        const force = setTimeout(() => server.forceShutdown(), graceMs)
        force.unref()
        healthServer?.server.forceShutdown()
        server.tryShutdown(() => {
          clearTimeout(force)
          resolve()
        })
      })
      return closing
    },
  }
}

/** The health service alone on a plaintext port, beside the Endpoint Picker's. */
async function startHealthOnly(
  host: string,
  port: number | null,
  health: ReturnType<typeof createExtProcHealth>,
): Promise<{ server: Server; port: number } | null> {
  if (port === null) return null
  const server = new Server()
  server.addService(extProcProtos().health.service, health.implementation)
  return { server, port: await bind(server, `${host}:${port}`, ServerCredentials.createInsecure()) }
}
