/**
 * A client of the Endpoint Picker's gRPC server that replays Envoy's ext_proc messages
 * (docs/endpoint-picker.md, "The protocol"; envoy/extensions/filters/http/ext_proc/v3/
 * processing_mode.proto in control-plane/scorer/epp/proto): request headers (with the
 * subset hint in metadata_context), body chunks with end_of_stream on the last, optional
 * trailers; once the request is answered, response headers with the served endpoint in
 * `envoy.lb` metadata and the response body chunks. It loads the same vendored protos.
 */
import {
  type ClientDuplexStream,
  type ClientReadableStream,
  credentials,
  type ServiceError,
} from '@grpc/grpc-js'
import type {
  ExtProcHeaderMap,
  ExtProcRequest,
  ExtProcStruct,
  ExtProcValue,
} from '../../control-plane/scorer/epp/ext-proc-messages.ts'
import { extProcProtos } from '../../control-plane/scorer/epp/ext-proc-protos.ts'
import { ExtProcCall, type ExtProcReceived } from './ext-proc-call.ts'
import { type EnvoyReplayResult, summarizeReplay } from './ext-proc-replay-result.ts'

export { ExtProcCall, type ExtProcReceived } from './ext-proc-call.ts'
export type { EnvoyReplayResult } from './ext-proc-replay-result.ts'

export interface ExtProcClient {
  /** Opens one ext_proc stream (one HTTP request). */
  open(): ExtProcCall
  /** grpc.health.v1.Health/Check: the status name, or the gRPC error. */
  check(service: string): Promise<string | ServiceError>
  /** grpc.health.v1.Health/Watch: the first `count` statuses it streams. */
  watch(service: string, count: number, onFirst?: () => void): Promise<string[]>
  close(): void
}

interface HealthClient {
  Check(
    request: { service: string },
    callback: (error: ServiceError | null, reply?: { status?: string }) => void,
  ): void
  Watch(request: { service: string }): ClientReadableStream<{ status?: string }>
  close(): void
}

/** `caPem`: trust this (self-signed) certificate and speak TLS; without it, plaintext. */
export function createExtProcClient(
  address: string,
  tls: { caPem: string } | null = null,
): ExtProcClient {
  const protos = extProcProtos()
  const creds = tls ? credentials.createSsl(Buffer.from(tls.caPem)) : credentials.createInsecure()
  // The test certificate names localhost; checking it by that name avoids an IP as TLS SNI.
  const options = tls
    ? { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' }
    : {}
  const processor = new protos.externalProcessor(address, creds, options)
  const health = new protos.health(address, creds, options) as unknown as HealthClient
  return {
    open: () =>
      new ExtProcCall(
        (processor.Process as () => ClientDuplexStream<unknown, unknown>).call(processor),
      ),
    check: (service) =>
      new Promise((resolve) => {
        health.Check({ service }, (error, reply) => resolve(error ?? reply?.status ?? 'UNKNOWN'))
      }),
    watch: (service, count, onFirst) =>
      new Promise((resolve, reject) => {
        const seen: string[] = []
        const call = health.Watch({ service })
        call.on('data', (reply) => {
          seen.push(reply.status ?? 'UNKNOWN')
          if (seen.length === 1) onFirst?.()
          if (seen.length === count) {
            call.cancel()
            resolve(seen)
          }
        })
        call.on('error', (error: ServiceError) => {
          if (seen.length < count) reject(error)
        })
      }),
    close() {
      processor.close()
      health.close()
    },
  }
}

function headerMap(headers: Readonly<Record<string, string>>): ExtProcHeaderMap {
  // Envoy sends raw_value (bytes), not value.
  return {
    headers: Object.entries(headers).map(([key, value]) => ({
      key,
      raw_value: Buffer.from(value),
    })),
  }
}

function stringList(values: readonly string[] | string): ExtProcValue {
  if (typeof values === 'string') return { stringValue: values }
  return { listValue: { values: values.map((value) => ({ stringValue: value })) } }
}

function filterMetadata(
  namespace: string,
  key: string,
  value: ExtProcValue,
): ExtProcRequest['metadata_context'] {
  const struct: ExtProcStruct = { fields: { [key]: value } }
  return { filter_metadata: { [namespace]: struct } }
}

export interface EnvoyResponseReplay {
  status: number
  /** `envoy.lb` / `x-gateway-destination-endpoint-served`; omitted when null. */
  served: string | null
  headers?: Record<string, string>
  /** The response body's chunks, in order; the last carries end_of_stream (none: headers end it). */
  chunks: readonly (string | Buffer)[]
  /** Response trailers: sent after the chunks, which then do not carry end_of_stream. */
  trailers?: Record<string, string>
  /** Cancel the call after this many chunks have been echoed, instead of finishing. */
  cancelAfterChunks?: number
}

export interface EnvoyReplay {
  /** Added to (or overriding) `:method POST`, `:path /v1/chat/completions`, `:authority`, content-type. */
  requestHeaders?: Record<string, string>
  /** The request body; null: the headers carry end_of_stream (no body). */
  body: string | Buffer | null
  /** How Envoy split the body into request_body messages (default: 16 KiB, like its buffers). */
  chunkSize?: number
  /** `envoy.lb.subset_hint` / `x-gateway-destination-endpoint-subset`: a list or a comma string. */
  subset?: readonly string[] | string
  /** Request trailers: sent after the body, whose last chunk then lacks end_of_stream. */
  trailers?: Record<string, string>
  /** `protocol_config` of the first message; default FULL_DUPLEX_STREAMED both ways. null: none. */
  protocolConfig?: ExtProcRequest['protocol_config'] | null
  /**
   * The upstream's answer, or a function of the routing answer that makes it (e.g. by
   * forwarding the request to the picked endpoint); omitted: the stream half-closes once the
   * request is answered.
   */
  response?:
    | EnvoyResponseReplay
    | ((routed: EnvoyReplayResult) => EnvoyResponseReplay | Promise<EnvoyResponseReplay>)
}

function chunksOf(body: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = []
  for (let start = 0; start < body.length; start += size)
    chunks.push(body.subarray(start, start + size))
  return chunks.length === 0 ? [Buffer.alloc(0)] : chunks
}

const defaultRequestHeaders = {
  ':method': 'POST',
  ':path': '/v1/chat/completions',
  ':authority': 'gateway.example',
  ':scheme': 'https',
  'content-type': 'application/json',
}

function requestAnswered(received: readonly ExtProcReceived[], waitForBody: boolean): boolean {
  return received.some(
    (item) =>
      item.kind === 'error' ||
      item.kind === 'end' ||
      item.response?.immediate_response !== undefined ||
      (waitForBody
        ? item.response?.request_trailers !== undefined ||
          item.response?.request_body?.response?.body_mutation?.streamed_response?.end_of_stream ===
            true ||
          (item.response?.request_body !== undefined &&
            item.response.request_body.response?.body_mutation === undefined)
        : item.response?.request_headers !== undefined),
  )
}

/** Replays one HTTP request through the gateway as Envoy would, and parses the answers. */
export async function replayEnvoy(
  client: ExtProcClient,
  replay: EnvoyReplay,
): Promise<EnvoyReplayResult> {
  const call = client.open()
  const config: ExtProcRequest['protocol_config'] =
    replay.protocolConfig === undefined
      ? { request_body_mode: 'FULL_DUPLEX_STREAMED', response_body_mode: 'FULL_DUPLEX_STREAMED' }
      : (replay.protocolConfig ?? undefined)
  const headers = { ...defaultRequestHeaders, ...replay.requestHeaders }
  const subset =
    replay.subset === undefined
      ? undefined
      : filterMetadata(
          'envoy.lb.subset_hint',
          'x-gateway-destination-endpoint-subset',
          stringList(replay.subset),
        )
  const body = replay.body === null ? null : Buffer.from(replay.body)
  call.send({
    request_headers: { headers: headerMap(headers), end_of_stream: body === null },
    ...(subset ? { metadata_context: subset } : {}),
    ...(config ? { protocol_config: config } : {}),
  })
  if (body !== null) {
    const duplex = config === undefined || config.request_body_mode === 'FULL_DUPLEX_STREAMED'
    if (!duplex && config?.send_body_without_waiting_for_header_response !== true) {
      await call.until((received) => received.length > 0)
    }
    // BUFFERED sends the whole body in one message.
    const pieces = duplex ? chunksOf(body, replay.chunkSize ?? 16_384) : [body]
    pieces.forEach((piece, index) => {
      const last = index === pieces.length - 1 && replay.trailers === undefined
      call.send({ request_body: { body: piece, end_of_stream: last } })
    })
    if (replay.trailers) call.send({ request_trailers: { trailers: headerMap(replay.trailers) } })
  }
  await call.until((received) => requestAnswered(received, body !== null))
  const answer = replay.response
  const response =
    typeof answer === 'function'
      ? call.finished()
        ? undefined
        : await answer(summarizeReplay(call.received))
      : answer
  if (response && !call.finished()) await replayResponse(call, response, responseBodyMode(config))
  if (!call.finished() && response?.cancelAfterChunks === undefined) call.halfClose()
  await call.until(() => call.finished())
  return summarizeReplay(call.received)
}

/** How Envoy passes the response body on: not at all, whole in one message, or chunk by chunk. */
function responseBodyMode(config: ExtProcRequest['protocol_config']): 'none' | 'whole' | 'chunks' {
  if (config === undefined) return 'chunks'
  const mode = config.response_body_mode ?? 'NONE'
  if (mode === 'NONE') return 'none'
  return mode === 'BUFFERED' || mode === 'BUFFERED_PARTIAL' ? 'whole' : 'chunks'
}

async function replayResponse(
  call: ExtProcCall,
  response: EnvoyResponseReplay,
  bodyMode: 'none' | 'whole' | 'chunks',
): Promise<void> {
  const served =
    response.served === null
      ? undefined
      : filterMetadata('envoy.lb', 'x-gateway-destination-endpoint-served', {
          stringValue: response.served,
        })
  const headers = { ':status': String(response.status), ...response.headers }
  const noBody = response.chunks.length === 0 && response.trailers === undefined
  call.send({
    response_headers: { headers: headerMap(headers), end_of_stream: noBody },
    ...(served ? { metadata_context: served } : {}),
  })
  const before = call.received.length
  const whole = Buffer.concat(response.chunks.map((chunk) => Buffer.from(chunk)))
  const chunks =
    bodyMode === 'none' ? [] : bodyMode === 'whole' && whole.length > 0 ? [whole] : response.chunks
  for (const [index, chunk] of chunks.entries()) {
    if (index === response.cancelAfterChunks) {
      // Envoy streams without waiting; wait here so the cut lands after the echoes.
      await call.until((received) => received.length >= before + 1 + index)
      call.cancel()
      return
    }
    const last = index === chunks.length - 1 && response.trailers === undefined
    call.send({ response_body: { body: Buffer.from(chunk), end_of_stream: last } })
  }
  const trailers = response.trailers ? 1 : 0
  if (response.trailers)
    call.send({ response_trailers: { trailers: headerMap(response.trailers) } })
  await call.until((received) => received.length >= before + 1 + chunks.length + trailers)
}
