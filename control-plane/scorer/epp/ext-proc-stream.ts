/**
 * One ext_proc stream: one HTTP request through the gateway, turned into the calls of the
 * Endpoint Picker's port (endpoint-picker.ts). Messages are handled one at a time, in
 * order, so that the answers keep Envoy's headers → body → trailers order even while a
 * pick waits.
 *
 * Body modes (ext-proc-modes.ts):
 * - FULL_DUPLEX_STREAMED: the request headers' answer waits for the body's end (or the
 *   trailers'), then the body goes back as streamed responses; response chunks are echoed.
 * - NONE: nothing but headers comes, so the pick happens on them.
 * - BUFFERED: the whole body is in one message, answered with CONTINUE. When the data plane
 *   sends it without waiting for the headers' answer, that answer is deferred as above;
 *   otherwise it goes at once and the route rides on the body's answer instead.
 * - STREAMED and GRPC are refused with UNIMPLEMENTED, so the gateway's failure mode applies.
 */
import { status as GrpcStatus } from '@grpc/grpc-js'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { openAiErrorBody } from '../../../shared/openai/openai-error-body.ts'
import type { EndpointPicker, PickInput } from './endpoint-picker.ts'
import {
  continueResponse,
  type ExtProcBody,
  type ExtProcHeaders,
  type ExtProcRequest,
  type ExtProcResponse,
  immediateResponse,
  readHeaderMap,
  readServedEndpoint,
  readSubsetHint,
  routeResponse,
  streamedChunks,
  streamedResponse,
} from './ext-proc-messages.ts'
import { type ExtProcModes, readExtProcModes } from './ext-proc-modes.ts'

/** Where a stream's answers go: the gRPC call. */
export interface ExtProcSink {
  send(response: ExtProcResponse): void
  /** Ends the call with status OK. */
  end(): void
  /** Ends the call with a gRPC error status. */
  fail(code: GrpcStatus, details: string): void
}

export interface ExtProcStreamOptions {
  picker: EndpointPicker
  sink: ExtProcSink
  /** A larger request body is answered 413 without a pick. */
  maxBodyBytes: number
  log: (message: string) => void
}

export interface ExtProcStream {
  receive(message: ExtProcRequest): void
  /** The data plane half-closed its side. */
  halfClosed(): void
  /** The call was cancelled (or broke). */
  cancelled(): void
}

function malformed(message: string): KinfError {
  return new KinfError('invalid_request', message)
}

export function openExtProcStream(options: ExtProcStreamOptions): ExtProcStream {
  const { picker, sink, maxBodyBytes, log } = options
  const abort = new AbortController()
  const exchange = picker.exchange(abort.signal)
  let chain: Promise<void> = Promise.resolve()
  let modes: ExtProcModes = readExtProcModes(undefined)
  let first = true
  let requestHeaders: Record<string, string> | null = null
  let subset: string[] | null = null
  const chunks: Buffer[] = []
  let bodyBytes = 0
  let routeInBody = false
  let picked = false
  let picking = false
  let responseStarted = false
  let responseEnded = false
  /** Nothing more goes to the sink. */
  let done = false
  let closed = false

  function close(outcome: 'completed' | 'aborted'): void {
    if (closed) return
    closed = true
    try {
      exchange.close(outcome)
    } catch (error) {
      log(`ext_proc: the picker's close failed: ${(error as Error).message}`)
    }
  }

  function send(response: ExtProcResponse): void {
    if (!done) sink.send(response)
  }

  function fail(code: GrpcStatus, details: string): void {
    if (done) return
    done = true
    log(`ext_proc: stream failed (gRPC ${GrpcStatus[code]}): ${details}`)
    sink.fail(code, details)
    abort.abort()
    close('aborted')
  }

  function refuse(status: number, body: string, headers: Readonly<Record<string, string>>): void {
    send(immediateResponse(status, body, headers))
    if (!done) sink.end()
    done = true
    close('aborted')
  }

  function completeResponse(): void {
    responseEnded = true
    close('completed')
  }

  function enqueue(task: () => void | Promise<void>): void {
    chain = chain.then(task).catch((error: unknown) => {
      const invalid = KinfError.isInstance(error) && error.code === 'invalid_request'
      fail(invalid ? GrpcStatus.INVALID_ARGUMENT : GrpcStatus.INTERNAL, (error as Error).message)
    })
  }

  /** Picks, then sends what the mode owes: the route, then the body's answers. */
  async function pickAndAnswer(end: 'headers' | 'body' | 'trailers'): Promise<void> {
    picked = true
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)
    chunks.length = 0
    const input: PickInput = { headers: requestHeaders ?? {}, body, subset }
    let pick: Awaited<ReturnType<typeof exchange.pick>>
    picking = true
    try {
      pick = await exchange.pick(input)
    } catch (error) {
      const unavailable = KinfError.isInstance(error) && error.status === 503
      const message = error instanceof Error ? error.message : String(error)
      fail(unavailable ? GrpcStatus.UNAVAILABLE : GrpcStatus.INTERNAL, `pick failed: ${message}`)
      return
    } finally {
      picking = false
    }
    if (done) return
    if (pick.kind === 'refused') return refuse(pick.status, pick.body, pick.headers)
    if (pick.endpoints.length === 0) throw new Error('the picker picked no endpoint')
    const streamed = modes.request === 'duplex' && end !== 'headers'
    const route = routeResponse(pick.endpoints, pick.headers, streamed ? body.length : null)
    if (routeInBody) {
      // The headers went on already; the buffered body's answer can still set them.
      if (end !== 'body') throw new Error('a buffered request ended without its body')
      send({ request_body: { response: route.common }, dynamic_metadata: route.metadata })
      return
    }
    send({ request_headers: { response: route.common }, dynamic_metadata: route.metadata })
    if (streamed) {
      for (const chunk of streamedChunks(body, end === 'body')) {
        send({ request_body: { response: chunk } })
      }
    } else if (end === 'body') {
      send({ request_body: { response: continueResponse() } })
    }
  }

  async function onRequestHeaders(message: ExtProcHeaders): Promise<void> {
    if (requestHeaders !== null) throw malformed('request_headers came twice')
    requestHeaders = readHeaderMap(message.headers)
    if (message.end_of_stream === true || modes.request === 'none') return pickAndAnswer('headers')
    if (modes.bodyWaitsForHeaders) {
      routeInBody = true
      send({ request_headers: { response: continueResponse() } })
    }
  }

  async function onRequestBody(message: ExtProcBody): Promise<void> {
    if (requestHeaders === null) throw malformed('request_body came before request_headers')
    if (picked) throw malformed('request_body came after the request had ended')
    const chunk = message.body ?? Buffer.alloc(0)
    bodyBytes += chunk.length
    if (bodyBytes > maxBodyBytes) {
      const error = new KinfError(
        'payload_too_large',
        `The request body exceeds ${maxBodyBytes} bytes`,
      )
      return refuse(413, JSON.stringify(openAiErrorBody(error)), {})
    }
    chunks.push(chunk)
    // A buffered body is whole in its one message, trailers or not.
    if (message.end_of_stream === true || modes.request === 'buffered') return pickAndAnswer('body')
  }

  async function onRequestTrailers(): Promise<void> {
    if (requestHeaders === null) throw malformed('request_trailers came before request_headers')
    // Trailers end a body that has not ended (FULL_DUPLEX_STREAMED sends them instead of
    // end_of_stream on the last chunk).
    if (!picked) await pickAndAnswer('trailers')
    send({ request_trailers: {} })
  }

  function onResponseHeaders(request: ExtProcRequest, message: ExtProcHeaders): void {
    if (!picked || responseStarted) throw malformed('response_headers came out of order')
    responseStarted = true
    const headers = readHeaderMap(message.headers)
    const served = readServedEndpoint(request.metadata_context)
    const status = Number(headers[':status'] ?? '0')
    notify(() => exchange.responseHeaders({ status, served, headers }))
    send({ response_headers: { response: continueResponse() } })
    if (message.end_of_stream === true) completeResponse()
  }

  function onResponseBody(message: ExtProcBody): void {
    if (!responseStarted || responseEnded) throw malformed('response_body came out of order')
    const chunk = message.body ?? Buffer.alloc(0)
    const endOfStream = message.end_of_stream === true
    const answer =
      modes.response === 'duplex' ? streamedResponse(chunk, endOfStream) : continueResponse()
    send({ response_body: { response: answer } })
    notify(() => exchange.responseBody(chunk, endOfStream))
    if (endOfStream) completeResponse()
  }

  function onResponseTrailers(): void {
    if (!responseStarted) throw malformed('response_trailers came before response_headers')
    send({ response_trailers: {} })
    if (!responseEnded) completeResponse()
  }

  /** The picker's observers must not break the stream: the response flows regardless. */
  function notify(call: () => void): void {
    try {
      call()
    } catch (error) {
      log(`ext_proc: the picker failed on the response: ${(error as Error).message}`)
    }
  }

  async function handle(message: ExtProcRequest): Promise<void> {
    if (done) return
    if (first) {
      first = false
      modes = readExtProcModes(message.protocol_config)
      if (modes.unsupported !== null) {
        const mode = modes.unsupported
        return fail(GrpcStatus.UNIMPLEMENTED, `request body mode ${mode} is not supported`)
      }
    }
    if (!picked) subset = readSubsetHint(message.metadata_context) ?? subset
    switch (message.request) {
      case 'request_headers':
        return onRequestHeaders(message.request_headers ?? {})
      case 'request_body':
        return onRequestBody(message.request_body ?? {})
      case 'request_trailers':
        return onRequestTrailers()
      case 'response_headers':
        return onResponseHeaders(message, message.response_headers ?? {})
      case 'response_body':
        return onResponseBody(message.response_body ?? {})
      case 'response_trailers':
        return onResponseTrailers()
      default:
        throw malformed(`a ProcessingRequest without a known message (${String(message.request)})`)
    }
  }

  return {
    receive: (message) => enqueue(() => handle(message)),
    halfClosed() {
      // Nothing more comes: a waiting pick is for a request no one will see answered.
      if (picking) abort.abort()
      enqueue(() => {
        // Without a response body to watch (mode NONE), the response ends with the stream.
        const ended = responseEnded || (responseStarted && modes.response === 'none')
        if (!ended) abort.abort()
        if (!done) sink.end()
        done = true
        close(ended ? 'completed' : 'aborted')
      })
    },
    cancelled() {
      done = true
      abort.abort()
      // After a pending pick settles, so that close follows it.
      enqueue(() => close(responseEnded ? 'completed' : 'aborted'))
    },
  }
}
