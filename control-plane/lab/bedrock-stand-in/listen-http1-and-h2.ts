import { createServer as createHttpServer, type IncomingMessage } from 'node:http'
import { createServer as createH2Server, type Http2ServerRequest } from 'node:http2'
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net'
import type { FakeResponse } from './serve-fake-converse.ts'

export type FakeRequest = IncomingMessage | Http2ServerRequest

export interface Listening {
  url: string
  /** Stops listening and drops every open connection. */
  close(): Promise<void>
}

/**
 * Serves HTTP/1.1 and cleartext HTTP/2 on one port: a connection that opens with HTTP/2's
 * preface goes to the HTTP/2 server (prior knowledge, as the SDK does for http://
 * endpoints), any other to HTTP/1.1.
 */
export async function listenHttp1AndH2(
  onRequest: (req: FakeRequest, res: FakeResponse) => void,
  port: number,
  host: string,
): Promise<Listening> {
  const http1 = createHttpServer(onRequest)
  const http2 = createH2Server(onRequest)
  const sockets = new Set<Socket>()
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
    server.listen(port, host, resolve)
  })
  const address = server.address() as AddressInfo
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
