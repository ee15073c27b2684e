import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'

/** An HTTP server of a test: its base URL, and a close that cuts its connections first. */
export interface LocalHttpServer {
  url: string
  close(): Promise<void>
}

/** Serves `handler` on a free port of 127.0.0.1 (a pod that misbehaves in one way, say). */
export async function startLocalHttpServer(handler: RequestListener): Promise<LocalHttpServer> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
