import { randomUUID } from 'node:crypto'
import type { IncomingMessage, Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { createAdaptorServer } from '@hono/node-server'
import type { Tracer } from '@opentelemetry/api'
import type { z } from 'zod'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { Log } from '../../shared/logging/log.ts'
import type { Plugins } from '../../shared/plugins.ts'
import type { QuotaStore } from '../../shared/quota/quota-store.ts'
import { createEdgeDeps } from '../../workers/app/create-edge-deps.ts'
import { createEdgeApp } from '../../workers/app/edge-app.ts'
import type { EdgeDecisionLog } from '../../workers/app/edge-decision-log.ts'
import { type EdgeDeps, EdgeLimits } from '../../workers/app/edge-deps.ts'
import { createEdgeMetrics, type EdgeMetrics } from '../../workers/app/edge-metrics.ts'
import type { AwsCredentials } from '../../workers/app/external-providers.ts'
import { closeHttpServer, drainHttpServer, trackActivity } from '../http/drain-http-server.ts'
import { guardNodeServer, NodeServerLimits, nodeServerOptions } from '../http/node-server-limits.ts'
import { type MetricsListener, startMetricsListener } from '../metrics/start-metrics-listener.ts'

export interface StartEdgeOptions {
  port: number
  host?: string
  /**
   * The port of /metrics, a listener of its own (never the API's: the counters say what
   * tenants send); 0 or absent: a free one; null: /metrics is not served.
   */
  metricsPort?: number | null
  /** Its address (default 127.0.0.1, this machine only; 0.0.0.0 to be scraped from a pod). */
  metricsHost?: string
  /** The verified snapshot, read with the schema of `plugins` (see openConfigFeed). */
  config: () => Promise<ConfigSnapshot>
  /** The strategies and conditions its rules are read with; the built-in ones when absent. */
  plugins?: Plugins
  /** One scorer URL, or several replicas' (see createScorerClient). */
  scorerUrls: readonly string[]
  signingSecret: string
  quotas: QuotaStore
  /** Reads the shared quota buckets for x-ratelimit-remaining-* (see EdgeDeps.quotaReader). */
  quotaReader?: EdgeDeps['quotaReader']
  /** Explicit AWS keys; the SDK's default chain (IRSA, environment) when absent. */
  awsCredentials?: AwsCredentials
  /** Replaces the PII detectors (tests of failing detectors). */
  detectPii?: EdgeDeps['detectPii']
  /** Where /v1/responses keeps conversations (Redis, for replicas); in memory when absent. */
  responses?: EdgeDeps['responses']
  /** The edge's limits where they differ from EdgeLimits' defaults. */
  limits?: EdgeDeps['limits']
  /** The Node server's; maxHeaderBytes defaults to the edge's plus 8 KiB for the request line. */
  server?: z.input<typeof NodeServerLimits>
  log: Log
  /** Request spans (see EdgeDeps.tracer); none when absent. */
  tracer?: Tracer
  /** One access-log line per request; on unless false. */
  accessLog?: boolean
  /**
   * The shared decision log, for the external attempts the edge decides alone (see
   * EdgeDeps.decisions); the caller flushes and closes it after the edge.
   */
  decisions?: EdgeDecisionLog
}

export interface RunningEdge {
  url: string
  /** The metrics listener's base URL (GET /metrics there); null when it is off. */
  metricsUrl: string | null
  metrics: EdgeMetrics
  /**
   * Stops. With `drainMs` (SIGTERM): new connections are refused at once, the requests in
   * flight, streams included, finish for up to `drainMs`, then what is left is cut.
   */
  close(options?: { drainMs?: number }): Promise<void>
}

/**
 * The edge app on Node, for the embedded default and for clusters that run the edge
 * in-cluster (kinfctl edge): the same Hono app as the Worker, with Node's fetch, clock and
 * timers, plus /metrics on a listener of its own (the API port answers it 404).
 */
export async function startEdge(options: StartEdgeOptions): Promise<RunningEdge> {
  const metrics = createEdgeMetrics()
  const app = createEdgeApp({
    ...createEdgeDeps({
      config: options.config,
      ...(options.plugins && { plugins: options.plugins }),
      quotas: options.quotas,
      scorerUrls: options.scorerUrls,
      signingSecret: options.signingSecret,
      awsCredentials: options.awsCredentials,
      fetch: globalThis.fetch,
      nowMs: () => Date.now(),
      sleep: (ms) => sleep(ms),
      newRequestId: () => randomUUID(),
      log: options.log,
      // @hono/node-server hands the app Node's request as env.incoming.
      clientAddress: (c) =>
        (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket.remoteAddress ??
        null,
      metrics,
      limits: options.limits,
      detectPii: options.detectPii,
    }),
    ...(options.responses && { responses: options.responses }),
    ...(options.quotaReader && { quotaReader: options.quotaReader }),
    ...(options.tracer && { tracer: options.tracer }),
    ...(options.accessLog === false && { accessLog: false }),
    ...(options.decisions && { decisions: options.decisions }),
  })
  const host = options.host ?? '127.0.0.1'
  // Node's parser answers what the app's own header check cannot see (and counts the request line).
  const limits = NodeServerLimits.parse({
    maxHeaderBytes: EdgeLimits.parse(options.limits ?? {}).maxHeaderBytes + 8 * 1024,
    ...options.server,
  })
  const serverOptions = nodeServerOptions(limits)
  const metricsListener: MetricsListener | null =
    options.metricsPort === null
      ? null
      : await startMetricsListener({
          name: 'edge metrics',
          host: options.metricsHost ?? '127.0.0.1',
          port: options.metricsPort ?? 0,
          render: () => metrics.render(),
        })
  const server = await new Promise<ReturnType<typeof createAdaptorServer>>((resolve, reject) => {
    const started = createAdaptorServer({ fetch: app.fetch, hostname: host, serverOptions })
    // Node's default queue of 511 overflows when a thousand clients connect at once; each
    // dropped SYN waits for its retransmit (1, 3, 7 s …). The kernel caps it at somaxconn.
    started.listen({ port: options.port, host, backlog: 4_096 }, () => {
      started.off('error', refuse)
      resolve(started)
    })
    // Without a listener, a port in use would be an uncaught 'error' that ends the process.
    const refuse = (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'the port is in use' : (error.code ?? error.message)
      const message = `edge: cannot listen on ${host}:${options.port}: ${why}`
      reject(new KinfError('invalid_config', message, { cause: error }))
    }
    started.once('error', refuse)
  }).catch(async (error: unknown) => {
    await metricsListener?.close()
    throw error
  })
  guardNodeServer(server as Server, limits)
  const activity = trackActivity(server as Server)
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    metricsUrl: metricsListener?.url ?? null,
    metrics,
    async close(closeOptions = {}) {
      const left = await drainHttpServer(server as Server, activity, closeOptions.drainMs ?? 0)
      if (left > 0 && closeOptions.drainMs)
        options.log(`edge: ${left} requests still in flight at the drain deadline are cut`, {
          level: 'warn',
        })
      await closeHttpServer(server as Server)
      // Last: a drain stays visible to scrapes until the API port is closed.
      await metricsListener?.close()
    },
  }
}
