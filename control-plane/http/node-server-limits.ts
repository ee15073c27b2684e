import type { Server, ServerOptions } from 'node:http'
import type { Duplex } from 'node:stream'
import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { openAiErrorBody } from '../../shared/openai/openai-error-body.ts'

/**
 * Time and size limits of a Node HTTP server, for slow and hostile clients. Node applies
 * requestTimeout to receiving the request only (headers and body), never to sending the
 * response, so a long stream is not cut by it.
 */
export const NodeServerLimits = z
  .strictObject({
    /** The whole header block must arrive within this (slowloris). */
    headersTimeoutMs: z.int().positive().default(10_000),
    /** The whole request, body included, must arrive within this (8 MiB at 140 KB/s). */
    requestTimeoutMs: z.int().positive().default(60_000),
    /**
     * An idle keep-alive connection is closed after this: longer than the 60 s idle timeout
     * of the load balancers in front (AWS ALB, nginx), so they never reuse a closing one.
     */
    keepAliveTimeoutMs: z.int().positive().default(65_000),
    /** Request line and headers together (Node's maxHeaderSize): 431 beyond. */
    maxHeaderBytes: z
      .int()
      .positive()
      .default(40 * 1024),
    /** Open connections; new ones beyond are closed at once. */
    maxConnections: z.int().positive().default(10_000),
    /** Open connections per client address; 0: no cap (behind a proxy all share one). */
    maxConnectionsPerAddress: z.int().nonnegative().default(0),
  })
  .refine((limits) => limits.headersTimeoutMs <= limits.requestTimeoutMs, {
    message: 'headersTimeoutMs must not exceed requestTimeoutMs',
  })
export type NodeServerLimits = z.infer<typeof NodeServerLimits>

/** The options of http.createServer that carry the limits. */
export function nodeServerOptions(limits: NodeServerLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    maxHeaderSize: limits.maxHeaderBytes,
    // Node checks the two timeouts only this often (30 s by default).
    connectionsCheckingInterval: Math.min(1_000, Math.ceil(limits.headersTimeoutMs / 4)),
    noDelay: true,
  }
}

/**
 * The limits no constructor option carries: connection caps, and an OpenAI-shaped answer
 * (408 on a timeout, 431 on headers past maxHeaderBytes, 400 otherwise) where Node would
 * send a bare one before closing the connection.
 */
export function guardNodeServer(server: Server, limits: NodeServerLimits): void {
  server.maxConnections = limits.maxConnections
  if (limits.maxConnectionsPerAddress > 0) capPerAddress(server, limits.maxConnectionsPerAddress)
  server.on('clientError', answerClientError)
}

function capPerAddress(server: Server, cap: number): void {
  const open = new Map<string, number>()
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? ''
    const count = (open.get(address) ?? 0) + 1
    if (count > cap) {
      socket.destroy()
      return
    }
    open.set(address, count)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left > 0) open.set(address, left)
      else open.delete(address)
    })
  })
}

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const [status, reason, failure] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'the request did not arrive within the time limit']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'request headers too large']
        : [400, 'Bad Request', 'malformed HTTP request']
  // As Node's own handler: answer only when no response has started on this connection.
  const response = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (!socket.writable || response?.headersSent) {
    socket.destroy()
    return
  }
  const code =
    status === 408 ? 'request_timeout' : status === 431 ? 'request_header_fields_too_large' : null
  const body = JSON.stringify(
    openAiErrorBody(
      new KinfError('invalid_request', failure, { status, ...(code ? { openAiCode: code } : {}) }),
    ),
  )
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  )
}
