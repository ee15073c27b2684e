import { connect, createServer, type Server, type Socket } from 'node:net'

/** A TCP proxy to Redis that a test can cut and restore, on the same port. */
export interface TcpProxy {
  url: string
  stop(): Promise<void>
  start(): Promise<void>
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  let port = 0
  let server: Server | null = null

  async function start() {
    const next = createServer((client) => {
      const upstream = connect(targetPort, '127.0.0.1')
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on('close', () => sockets.delete(socket))
        socket.on('error', () => {
          client.destroy()
          upstream.destroy()
        })
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => next.listen(port, '127.0.0.1', resolve))
    port = (next.address() as { port: number }).port
    server = next
  }

  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    async stop() {
      const closing = server
      server = null
      for (const socket of sockets) socket.destroy()
      if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()))
    },
  }
}
