import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { prometheusTextContentType } from '../../shared/metrics/create-prometheus-registry.ts'
import { openAiErrorBody } from '../../shared/openai/openai-error-body.ts'
import { guardNodeServer, NodeServerLimits, nodeServerOptions } from '../http/node-server-limits.ts'
import { collectProcessMetrics, renderProcessMetrics } from './process-metrics.ts'

/** A probe's answer now: its status and body (a string as plain text, anything else as JSON). */
export type ProbeAnswer = () => { status: number; body: unknown }

export interface MetricsListenerOptions {
  /** Who listens, for the refusal of a port in use ("scorer metrics"). */
  name: string
  host: string
  /** 0: a free port. */
  port: number
  /** The service's exposition, rendered at each scrape; the process metrics follow it. */
  render: () => string
  /** GET paths beside /metrics (the scorer's /health, the controller's /healthz and /readyz). */
  probes?: Readonly<Record<string, ProbeAnswer>>
}

export interface MetricsListener {
  /** Its base URL: GET /metrics (and the probes' paths) under it. */
  readonly url: string
  close(): Promise<void>
}

/**
 * A service's /metrics on a listener of its own, never on its API port: the counters say
 * what tenants send (requests, PII labels, bursts), so they are reached only where the
 * operator opens this port (a NetworkPolicy's metrics peers, a firewall), not by API
 * clients. Only scrapers and probes connect, so connections are capped low. The process's
 * own metrics (prom-client's defaults, process-metrics.ts) follow the service's.
 */
export async function startMetricsListener(
  options: MetricsListenerOptions,
): Promise<MetricsListener> {
  const limits = NodeServerLimits.parse({ maxConnections: 256 })
  const probes = options.probes ?? {}
  const paths = new Set(['/metrics', ...Object.keys(probes)])
  collectProcessMetrics()
  const server = createServer(
    nodeServerOptions(limits),
    async (req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? '/').split('?', 1)[0] ?? '/'
      const probe = probes[path]
      try {
        if (!paths.has(path))
          throw new KinfError('not_found', `no route for ${req.method} ${path}`, { status: 404 })
        if (req.method !== 'GET' && req.method !== 'HEAD')
          throw new KinfError('invalid_request', `no route for ${req.method} ${path}`, {
            status: 405,
          })
        if (probe) {
          const { status, body } = probe()
          if (typeof body === 'string')
            res.writeHead(status, { 'content-type': 'text/plain' }).end(body)
          else
            res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
        } else {
          const text = options.render() + (await renderProcessMetrics())
          res.writeHead(200, { 'content-type': prometheusTextContentType }).end(text)
        }
      } catch (error) {
        const failure = KinfError.isInstance(error)
          ? error
          : new KinfError('internal', (error as Error).message)
        res
          .writeHead(failure.status, {
            'content-type': 'application/json',
            ...(failure.status === 405 ? { allow: 'GET, HEAD' } : {}),
          })
          .end(JSON.stringify(openAiErrorBody(failure)))
      }
    },
  )
  guardNodeServer(server, limits)
  await new Promise<void>((resolve, reject) => {
    // Without a listener, a port in use would be an uncaught 'error' that ends the process.
    const refuse = (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'the port is in use' : (error.code ?? error.message)
      const where = `${options.host}:${options.port}`
      reject(
        new KinfError('invalid_config', `${options.name}: cannot listen on ${where}: ${why}`, {
          cause: error,
        }),
      )
    }
    server.once('error', refuse)
    server.listen({ port: options.port, host: options.host }, () => {
      server.off('error', refuse)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const host = options.host.includes(':') ? `[${options.host}]` : options.host
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
