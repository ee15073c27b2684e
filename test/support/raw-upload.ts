import { connect } from 'node:net'

/** An HTTP answer as a raw upload read it. */
export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** What a raw upload got back, and who closed the connection. */
export interface RawUploadResult {
  /**
   * The whole answer; null when the connection ended without one. A server that closes a
   * connection with unread bytes resets it (TCP), and a reset can reach the client before
   * the answer sent just ahead of it is read.
   */
  answer: RawAnswer | null
  /** The server ended the connection before the client had sent everything it meant to. */
  closedByServer: boolean
  /** Body bytes the client handed to its socket (the kernel may not have delivered them all). */
  bytesWritten: number
}

interface UploadOptions {
  url: string
  path: string
  headers: Record<string, string>
  /**
   * The content-length sent, whatever the body; 'chunked': none, the body sent in chunks
   * and never finished (a stream without end, as far as the server knows).
   */
  declaredBytes: number | 'chunked'
}

const chunkBytes = 64 * 1024
const crlf = Buffer.from('\r\n')

/**
 * POSTs over a plain TCP socket: the header block with `content-length: declaredBytes`,
 * then `sendBytes` of spaces as body (all declared, unless told), 64 KiB at a time, as a
 * client that does not wait for an early answer would. Resolves once the connection
 * ends, or once the server has answered and the whole declared body has been sent.
 */
export function rawUpload(
  options: UploadOptions & { sendBytes?: number },
): Promise<RawUploadResult> {
  const target = new URL(options.url)
  const chunked = options.declaredBytes === 'chunked'
  const toSend = options.sendBytes ?? (chunked ? chunkBytes : (options.declaredBytes as number))
  return new Promise((resolve) => {
    const socket = connect(Number(target.port), target.hostname)
    let received = Buffer.alloc(0)
    let written = 0
    /** Whether the whole declared body has gone: else only the server can end the exchange. */
    const complete = () => !chunked && written >= (options.declaredBytes as number)
    let answer: RawAnswer | null = null
    let settled = false
    const finish = (closedByServer: boolean) => {
      if (settled) return
      settled = true
      socket.destroy()
      resolve({ answer, closedByServer, bytesWritten: written })
    }
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data])
      answer ??= parseAnswer(received)
      if (answer && complete()) finish(false)
    })
    // Writes into a connection the server closed fail (EPIPE, ECONNRESET): expected here.
    socket.on('error', () => {})
    socket.on('close', () => finish(true))
    socket.write(requestHead(target, options))
    const chunk = Buffer.alloc(chunkBytes, 0x20)
    const pump = () => {
      while (written < toSend && !socket.destroyed) {
        const size = Math.min(chunkBytes, toSend - written)
        written += size
        const bytes = size === chunkBytes ? chunk : chunk.subarray(0, size)
        const sent = socket.write(
          chunked ? Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), bytes, crlf]) : bytes,
        )
        if (!sent) {
          socket.once('drain', pump)
          return
        }
      }
      if (answer && complete()) finish(false)
    }
    pump()
  })
}

/**
 * Starts a POST over a plain TCP socket and stops after `sendBytes` of body, leaving the
 * connection open (a client still uploading, as far as the server knows): resolves once
 * those bytes are handed to the kernel, with a way to cut the connection.
 */
export async function startUpload(
  options: UploadOptions & { sendBytes: number },
): Promise<{ cut(): void }> {
  const target = new URL(options.url)
  const socket = connect(Number(target.port), target.hostname)
  socket.on('error', () => {})
  await new Promise<void>((resolve, reject) => {
    socket.write(requestHead(target, options))
    socket.write(Buffer.alloc(options.sendBytes, 0x20), (error) =>
      error ? reject(error) : resolve(),
    )
  })
  return { cut: () => socket.destroy() }
}

/** The request line and header block. */
function requestHead(target: URL, options: UploadOptions): string {
  const framing =
    options.declaredBytes === 'chunked'
      ? { 'transfer-encoding': 'chunked' }
      : { 'content-length': String(options.declaredBytes) }
  const lines = Object.entries({
    host: target.host,
    'content-type': 'application/json',
    ...options.headers,
    ...framing,
  }).map(([name, value]) => `${name}: ${value}\r\n`)
  return `POST ${options.path} HTTP/1.1\r\n${lines.join('')}\r\n`
}

/** A whole HTTP/1.1 answer (content-length or chunked), or null while it is still arriving. */
function parseAnswer(bytes: Buffer): RawAnswer | null {
  const end = bytes.indexOf('\r\n\r\n')
  if (end < 0) return null
  const [statusLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const at = line.indexOf(':')
    headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim()
  }
  const status = Number(statusLine.split(' ')[1])
  const rest = bytes.subarray(end + 4)
  if (headers['transfer-encoding'] === 'chunked') {
    const body = dechunk(rest)
    return body === null ? null : { status, headers, body }
  }
  const length = Number(headers['content-length'] ?? 0)
  if (rest.length < length) return null
  return { status, headers, body: rest.subarray(0, length).toString('utf8') }
}

/** A chunked body's text, or null until its last chunk has arrived. */
function dechunk(bytes: Buffer): string | null {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at)
    if (lineEnd < 0) return null
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16)
    if (size === 0) return Buffer.concat(parts).toString('utf8')
    if (bytes.length < lineEnd + 2 + size + 2) return null
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}
