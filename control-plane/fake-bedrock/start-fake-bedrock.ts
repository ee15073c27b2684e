import { createServer as createHttpServer, type IncomingMessage } from 'node:http'
import { createServer as createH2Server, type Http2ServerRequest } from 'node:http2'
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import type { ConverseUsage } from '../../shared/bedrock/converse-response.ts'
import { parseOptions } from '../../shared/config/parse-options.ts'
import { eventStreamFrame } from './event-stream-frame.ts'
import {
  type FaultCounters,
  fakeBedrockErrors,
  parseFakeBedrockFaults,
} from './fake-bedrock-fault.ts'
import { fakeConverseResponse, fakeStreamEvents } from './fake-converse-output.ts'
import { planFakeReply } from './plan-fake-reply.ts'
import { validateConverseBody } from './validate-converse-body.ts'

export const FakeBedrockOptions = z.strictObject({
  port: z
    .int({ error: 'must be a port number' })
    .min(0, { error: 'must be a port number' })
    .max(65_535, { error: 'must be a port number' })
    .default(0)
    .describe('0: a free port'),
  host: z.string().default('127.0.0.1').describe('Loopback unless told otherwise'),
})
export type FakeBedrockOptions = z.infer<typeof FakeBedrockOptions>
export type FakeBedrockOptionsInput = z.input<typeof FakeBedrockOptions>

/** What the fake saw of one request, for tests to assert on. */
export interface FakeBedrockRequest {
  operation: 'converse' | 'converse-stream'
  modelId: string
  httpVersion: string
  headers: Record<string, string | string[] | undefined>
  body: unknown
  requestId: string
  status: number
  /** The client went away before the answer was complete. */
  aborted: boolean
}

export interface FakeBedrock {
  url: string
  requests: FakeBedrockRequest[]
  /**
   * Fault specs applied to every request from now on, besides its header's and model id's
   * (parseFakeBedrockFaults' grammar): a storm a test starts and ends; [] ends it.
   */
  setFaults(specs: readonly string[]): void
  close(): Promise<void>
}

type Request = IncomingMessage | Http2ServerRequest
/** What the handler uses of a response, common to HTTP/1.1 and HTTP/2's compatibility API. */
interface Response {
  readonly writableFinished: boolean
  readonly destroyed: boolean
  readonly headersSent: boolean
  writeHead(status: number, headers: Record<string, string>): unknown
  write(chunk: Uint8Array): unknown
  end(chunk?: Uint8Array | string): unknown
  on(event: 'close', listener: () => void): unknown
  destroy(): unknown
  /** HTTP/2 only. */
  readonly stream?: { readonly rstCode: number }
}

const route = /^\/model\/([^/]+)\/(converse|converse-stream)$/
/** The shape of a SigV4 Authorization header; the signature itself is not checked. */
const sigV4 =
  /^AWS4-HMAC-SHA256 Credential=[^/\s]+\/\d{8}\/[a-z0-9-]+\/bedrock\/aws4_request, ?SignedHeaders=[a-z0-9;:-]+, ?Signature=[0-9a-f]{64}$/
const maxBodyBytes = 8 * 1024 * 1024
/** The time the fake reports the model took; fixed, so answers are reproducible. */
const latencyMs = 42

/** Count `tokens` of the input as cached (as Bedrock does, they leave inputTokens). */
function moveToCache(
  usage: ConverseUsage,
  tokens: number | undefined,
  field: 'cacheReadInputTokens' | 'cacheWriteInputTokens',
): void {
  if (tokens === undefined) return
  const moved = Math.min(tokens, usage.inputTokens)
  usage.inputTokens -= moved
  usage[field] = (usage[field] ?? 0) + moved
}

async function readJson(req: Request): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > maxBodyBytes) throw new Error('request body too large')
    chunks.push(chunk)
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

/**
 * A local stand-in for the Bedrock Runtime Converse API, for tests and demos: JSON for
 * /converse, real application/vnd.amazon.eventstream frames for /converse-stream. Speaks
 * HTTP/1.1 and cleartext HTTP/2 on one port (the SDK's Node client uses HTTP/2). Answers
 * are deterministic (see planFakeReply); faults are injected per request (see
 * parseFakeBedrockFaults).
 */
export async function startFakeBedrock(input: FakeBedrockOptionsInput = {}): Promise<FakeBedrock> {
  const options = parseOptions(FakeBedrockOptions, input, 'fake bedrock')
  const requests: FakeBedrockRequest[] = []
  const counters: FaultCounters = new Map()
  const cachedPrefixes = new Set<string>()
  let serverFaults: readonly string[] = []

  const handle = async (req: Request, res: Response) => {
    const requestId = `fa4eb0c0-0000-4000-8000-${String(requests.length + 1).padStart(12, '0')}`
    const send = (status: number, body: unknown, errorType?: string) => {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-amzn-requestid': requestId,
      }
      if (errorType)
        headers['x-amzn-errortype'] =
          `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/`
      res.writeHead(status, headers)
      res.end(JSON.stringify(body))
      return status
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    // For tests that run where this object is out of reach (inside workerd): how many
    // Converse calls arrived. Not a Bedrock API.
    if (req.method === 'GET' && path === '/__fake/requests') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ count: requests.length }))
      return
    }
    const match = route.exec(path)
    if (req.method !== 'POST' || !match) {
      send(404, { message: `no route for ${req.method} ${req.url}` }, 'UnknownOperationException')
      return
    }
    const operation = match[2] === 'converse' ? 'converse' : 'converse-stream'
    const modelId = decodeURIComponent(match[1] ?? '')
    const record: FakeBedrockRequest = {
      operation,
      modelId,
      httpVersion: req.httpVersion,
      headers: { ...req.headers },
      body: undefined,
      requestId,
      status: 0,
      aborted: false,
    }
    requests.push(record)
    res.on('close', () => {
      // HTTP/2 reports a stream the client reset (RST_STREAM CANCEL) as finished.
      const reset = res.stream !== undefined && res.stream.rstCode !== 0
      if (!res.writableFinished || reset) record.aborted = true
    })
    const authorization = req.headers.authorization
    if (typeof authorization !== 'string') {
      record.status = send(
        403,
        { message: 'Missing Authentication Token' },
        'MissingAuthenticationTokenException',
      )
      return
    }
    if (!sigV4.test(authorization)) {
      record.status = send(
        400,
        { message: 'Authorization header is not a SigV4 signature' },
        'IncompleteSignatureException',
      )
      return
    }
    try {
      record.body = await readJson(req)
    } catch (error) {
      record.status = send(
        400,
        { message: `Malformed input request: ${(error as Error).message}` },
        'ValidationException',
      )
      return
    }
    const header = req.headers['x-fake-bedrock-fault']
    let faults: ReturnType<typeof parseFakeBedrockFaults>
    try {
      faults = parseFakeBedrockFaults(
        [
          ...serverFaults,
          ...modelId.split('+').slice(1),
          ...(typeof header === 'string' ? header.split(',') : []),
        ],
        modelId,
        counters,
      )
    } catch (error) {
      record.status = send(400, { message: (error as Error).message }, 'ValidationException')
      return
    }
    const injected = faults.error === undefined ? undefined : fakeBedrockErrors[faults.error]
    if (injected && !(faults.error === 'stream-throttle' && operation === 'converse-stream')) {
      record.status = send(injected.status, { message: injected.message }, injected.type)
      return
    }
    const request = validateConverseBody(record.body)
    if (typeof request === 'string') {
      record.status = send(400, { message: request }, 'ValidationException')
      return
    }
    const reply = planFakeReply(request, requests.length, cachedPrefixes)
    if (faults.stopReason) reply.stopReason = faults.stopReason
    moveToCache(reply.usage, faults.cacheRead, 'cacheReadInputTokens')
    moveToCache(reply.usage, faults.cacheWrite, 'cacheWriteInputTokens')
    if (operation === 'converse') {
      if (faults.delayMs) await sleep(faults.delayMs)
      if (record.aborted) return
      record.status = send(200, fakeConverseResponse(reply, latencyMs))
      return
    }
    record.status = 200
    res.writeHead(200, {
      'content-type': 'application/vnd.amazon.eventstream',
      'x-amzn-requestid': requestId,
    })
    if (injected) {
      res.end(eventStreamFrame('exception', 'throttlingException', { message: injected.message }))
      return
    }
    const events = fakeStreamEvents(reply, latencyMs)
    for (const [i, event] of events.entries()) {
      if (res.destroyed || record.aborted) return
      if (faults.streamErrorAfter === i) {
        res.end(
          eventStreamFrame('exception', 'modelStreamErrorException', {
            message: 'The model stream failed (injected fault).',
            originalStatusCode: 500,
            originalMessage: 'injected',
          }),
        )
        return
      }
      if (faults.delayMs) await sleep(faults.delayMs)
      if (res.destroyed || record.aborted) return
      res.write(eventStreamFrame('event', event.type, event.payload))
    }
    res.end()
  }
  const onRequest = (req: Request, res: Response) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, {
          'content-type': 'application/json',
          'x-amzn-errortype': 'InternalServerException',
        })
        res.end(JSON.stringify({ message: String(error) }))
      } else res.destroy()
    })
  }

  const http1 = createHttpServer(onRequest)
  const http2 = createH2Server(onRequest)
  const sockets = new Set<Socket>()
  // Both protocols on one port: a connection that opens with HTTP/2's preface goes to the
  // HTTP/2 server (prior knowledge, as the SDK does for http:// endpoints), any other to HTTP/1.1.
  const server = createTcpServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.once('data', (first: Buffer) => {
      socket.pause()
      if (first.subarray(0, 3).toString('latin1') === 'PRI') {
        // The HTTP/2 session reads what is buffered on the socket before its handle.
        socket.unshift(first)
        http2.emit('connection', socket)
      } else {
        // The HTTP/1.1 parser reads from the handle directly: hand it the first chunk.
        http1.emit('connection', socket)
        socket.emit('data', first)
        socket.resume()
      }
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, resolve)
  })
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${host}:${address.port}`,
    requests,
    setFaults(specs) {
      parseFakeBedrockFaults(specs, 'check', new Map())
      serverFaults = [...specs]
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
