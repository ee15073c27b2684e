/**
 * A real OTLP/HTTP trace collector for tests: POST /v1/traces with protobuf
 * (application/x-protobuf) or OTLP/JSON (application/json), gzip or not, answered as the
 * OTLP specification says (200 with an empty ExportTraceServiceResponse). What a request
 * cannot be read as gets 400, and the collector carries on.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import { gunzipSync } from 'node:zlib'
import {
  type CollectedSpan,
  decodeJsonTraces,
  decodeProtobufTraces,
  exportTraceResponseBytes,
} from './decode-otlp-traces.ts'
import { startLocalHttpServer } from './local-http-server.ts'

export type { CollectedSpan } from './decode-otlp-traces.ts'

/** One export request the collector accepted. */
export interface CollectedRequest {
  headers: IncomingHttpHeaders
  contentType: 'protobuf' | 'json'
  spans: CollectedSpan[]
}

export interface OtlpCollector {
  /** The base URL (http://127.0.0.1:PORT), for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string
  /** Every span received so far, in arrival order. */
  spans(): CollectedSpan[]
  /** Every export request accepted so far. */
  requests(): CollectedRequest[]
  /** Requests refused (400, 404, 405, 413, 415), with why. */
  refusals(): { status: number; reason: string }[]
  /** Resolves with the spans once `predicate` holds of them; rejects after `timeoutMs`. */
  waitForSpans(
    predicate: (spans: CollectedSpan[]) => boolean,
    timeoutMs: number,
  ): Promise<CollectedSpan[]>
  close(): Promise<void>
}

const maxBodyBytes = 16 * 1024 * 1024

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const requests: CollectedRequest[] = []
  const refusals: { status: number; reason: string }[] = []
  const waiters = new Set<() => void>()
  const spans = () => requests.flatMap((request) => request.spans)

  const server = await startLocalHttpServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      refuse(response, 400, error instanceof Error ? error.message : String(error))
    })
  })

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://collector').pathname
    if (path !== '/v1/traces') return refuse(response, 404, `no ${path} here`)
    if (request.method !== 'POST') return refuse(response, 405, `${request.method} is not POST`)
    const mediaType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
    if (mediaType !== 'application/x-protobuf' && mediaType !== 'application/json')
      return refuse(response, 415, `content-type ${mediaType || '(none)'}`)
    const body = await bodyOf(request)
    if (body === undefined) return refuse(response, 413, `body above ${maxBodyBytes} bytes`)
    const protobuf = mediaType === 'application/x-protobuf'
    const received = protobuf ? decodeProtobufTraces(body) : decodeJsonTraces(body.toString())
    requests.push({
      headers: request.headers,
      contentType: protobuf ? 'protobuf' : 'json',
      spans: received,
    })
    for (const wake of waiters) wake()
    response.writeHead(200, { 'content-type': mediaType })
    response.end(protobuf ? exportTraceResponseBytes() : '{}')
  }

  function refuse(response: ServerResponse, status: number, reason: string): void {
    refusals.push({ status, reason })
    if (response.headersSent) return void response.destroy()
    response.writeHead(status, { 'content-type': 'text/plain' })
    response.end(reason)
  }

  return {
    url: server.url,
    spans,
    requests: () => [...requests],
    refusals: () => [...refusals],
    waitForSpans(predicate, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(spans())) return
          settle()
          resolve(spans())
        }
        const timer = setTimeout(() => {
          settle()
          const names = spans().map((span) => span.name)
          reject(
            new Error(`the spans awaited did not arrive; received: ${names.join(', ') || 'none'}`),
          )
        }, timeoutMs)
        const settle = () => {
          clearTimeout(timer)
          waiters.delete(check)
        }
        waiters.add(check)
        check()
      })
    },
    close: () => server.close(),
  }
}

/** The request's body, gunzipped when sent so; undefined when it is too large. */
async function bodyOf(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size > maxBodyBytes) return undefined
    chunks.push(chunk as Buffer)
  }
  const body = Buffer.concat(chunks)
  const encoding = request.headers['content-encoding']?.trim().toLowerCase()
  if (encoding === undefined || encoding === 'identity') return body
  if (encoding === 'gzip') return gunzipSync(body, { maxOutputLength: maxBodyBytes })
  throw new Error(`content-encoding ${encoding} is not gzip`)
}
