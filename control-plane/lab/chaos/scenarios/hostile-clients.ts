import { connect, type Socket } from 'node:net'

/** One raw connection of a hostile client, and what the server made of it. */
export interface HostileConnection {
  readonly kind: string
  readonly socket: Socket
  /** The client's port: the server's side of the connection names it as the remote one. */
  localPort(): number | null
  /** What the server sent before closing (its status line, when it answered). */
  received(): string
  /** Stops sending and closes from the client's side. */
  destroy(): void
}

interface Plan {
  kind: string
  url: string
  /** Sent at once on connect. */
  opening: string
  /** Then one byte of this every `everyMs`, until the server closes or it runs out. */
  trickle?: { bytes: string; everyMs: number }
  /** Never reads what the server sends (a paused socket): its windows fill. */
  neverRead?: boolean
}

function hostile(plan: Plan): HostileConnection {
  const { hostname, port } = new URL(plan.url)
  const socket = connect({ host: hostname, port: Number(port) })
  let received = ''
  // Kept: a closed socket forgets its port, and the server's side is what is checked.
  let localPort: number | null = null
  let timer: NodeJS.Timeout | null = null
  const stop = () => {
    if (timer) clearInterval(timer)
    timer = null
  }
  socket.on('error', stop)
  socket.on('close', stop)
  if (!plan.neverRead)
    socket.on('data', (chunk: Buffer) => {
      if (received.length < 4_096) received += chunk.toString('latin1')
    })
  socket.once('connect', () => {
    localPort = socket.localPort ?? null
    if (plan.neverRead) socket.pause()
    socket.write(plan.opening)
    const { trickle } = plan
    if (!trickle) return
    let sent = 0
    timer = setInterval(() => {
      if (sent >= trickle.bytes.length || socket.destroyed) return stop()
      socket.write(trickle.bytes[sent++] ?? '')
    }, trickle.everyMs)
  })
  return {
    kind: plan.kind,
    socket,
    localPort: () => localPort,
    received: () => received,
    destroy: () => {
      stop()
      socket.destroy()
    },
  }
}

const requestLine = (url: string, path: string) =>
  `POST ${path} HTTP/1.1\r\nhost: ${new URL(url).host}\r\n`

/** Slowloris: a request line, then headers one byte a second, never ending them. */
export function slowloris(url: string, everyMs = 1_000): HostileConnection {
  return hostile({
    kind: 'slowloris',
    url,
    opening: requestLine(url, '/v1/chat/completions'),
    trickle: { bytes: 'x-slow: '.padEnd(4_096, 'a'), everyMs },
  })
}

/** Whole headers announcing a body, then the body one byte a second. */
export function tricklingBody(
  url: string,
  apiKey: string,
  everyMs = 1_000,
  bodyBytes = 4_096,
): HostileConnection {
  return hostile({
    kind: 'trickling body',
    url,
    opening: `${requestLine(url, '/v1/chat/completions')}authorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${bodyBytes}\r\n\r\n`,
    trickle: { bytes: '{"model":"m","messages":['.padEnd(bodyBytes, ' '), everyMs },
  })
}

/** A whole streaming request whose answer is never read (the socket stays paused). */
export function neverReads(url: string, apiKey: string, body: unknown): HostileConnection {
  const json = JSON.stringify(body)
  return hostile({
    kind: 'never reads',
    url,
    opening: `${requestLine(url, '/v1/chat/completions')}authorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
    neverRead: true,
  })
}
