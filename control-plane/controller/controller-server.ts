import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { prometheusTextContentType } from '../metrics/create-prometheus-registry.ts'

export interface ControllerProbes {
  /** Null when ready; otherwise why not (followers are ready too: they serve probes only). */
  notReady: () => string | null
  metrics: () => string
}

/** /metrics, /healthz (the process answers) and /readyz (caches synced). */
export async function startControllerServer(
  probes: ControllerProbes,
  host: string,
  port: number,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0]
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end()
      return
    }
    if (path === '/metrics') {
      response.writeHead(200, { 'content-type': prometheusTextContentType }).end(probes.metrics())
    } else if (path === '/healthz' || path === '/livez') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n')
    } else if (path === '/readyz') {
      const reason = probes.notReady()
      response
        .writeHead(reason === null ? 200 : 503, { 'content-type': 'text/plain' })
        .end(reason === null ? 'ok\n' : `not ready: ${reason}\n`)
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const { port: bound } = server.address() as AddressInfo
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
