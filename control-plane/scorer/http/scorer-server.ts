import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { constantTimeEqual } from '../../../shared/auth/constant-time-equal.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { openAiErrorBody } from '../../../shared/openai/openai-error-body.ts'
import { routePaths } from '../../../shared/scorer-api/route-protocol.ts'
import type { ServerActivity } from '../../http/drain-http-server.ts'
import { guardNodeServer, nodeServerOptions } from '../../http/node-server-limits.ts'
import { type MetricsListener, startMetricsListener } from '../../metrics/start-metrics-listener.ts'
import type { LivePools } from '../pools/live-pools.ts'
import type { ScorerConfig } from '../scorer-config.ts'
import { handleInference } from '../serving/handle-inference.ts'
import { handleRoute } from '../serving/handle-route.ts'
import type { InferenceContext, ScorerContext } from '../serving/inference-context.ts'
import { serveEmbeddings } from '../serving/serve-embeddings.ts'
import { lookupReport, podsReport } from './admin-api.ts'
import { parseJson, readBody } from './read-body.ts'

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(value))
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void

/**
 * The scorer's API: OpenAI routes (signed by the edge), /admin. A request is served by the
 * pools of its start: it leases them until it is answered. /metrics and /health are not
 * here but on the metrics listener (startScorerMetricsListener).
 */
export function createScorerServer(
  context: ScorerContext,
  live: LivePools,
  activity: ServerActivity = { inFlight: 0 },
  /** More routes (the status page's), beside the scorer's own. */
  extra: Record<string, Handler> = {},
): Server {
  const leased =
    (handle: (context: InferenceContext, req: IncomingMessage, res: ServerResponse) => unknown) =>
    async (req: IncomingMessage, res: ServerResponse) => {
      const lease = live.lease()
      try {
        await handle({ ...context, pools: lease.pools, backends: lease.backends }, req, res)
      } finally {
        lease.release()
      }
    }
  const now = (): InferenceContext => ({ ...context, ...live.current })
  const admin = (req: IncomingMessage) => {
    const token = context.config.adminToken
    if (token === null)
      throw new KinfError('forbidden', 'the admin API is off: set KINFERENCE_ADMIN_TOKEN')
    const given = req.headers.authorization ?? ''
    if (!given.startsWith('Bearer ') || !constantTimeEqual(given.slice(7), token)) {
      throw new KinfError('unauthorized', 'admin API: missing or wrong bearer token')
    }
  }
  const routes: Record<string, Handler> = {
    ...extra,
    'POST /v1/chat/completions': leased((c, req, res) => handleInference(c, 'chat', req, res)),
    'POST /v1/completions': leased((c, req, res) => handleInference(c, 'completion', req, res)),
    'POST /v1/embeddings': leased(serveEmbeddings),
    [`POST ${routePaths.chat}`]: leased((c, req, res) => handleRoute(c, 'chat', req, res)),
    [`POST ${routePaths.completion}`]: leased((c, req, res) =>
      handleRoute(c, 'completion', req, res),
    ),
    'GET /admin/pods': async (req, res) => {
      admin(req)
      json(res, 200, await podsReport(now()))
    },
    'POST /admin/lookup': async (req, res) => {
      admin(req)
      json(
        res,
        200,
        await lookupReport(now(), parseJson(await readBody(req, context.config.maxBodyBytes))),
      )
    },
  }
  const knownPaths = new Set(Object.keys(routes).map((key) => key.split(' ')[1]))
  const server = createServer(nodeServerOptions(context.config.server), async (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    const handler = routes[`${req.method} ${path}`]
    activity.inFlight++
    res.once('close', () => activity.inFlight--)
    try {
      if (!handler) {
        const status = knownPaths.has(path) ? 405 : 404
        throw new KinfError(
          status === 405 ? 'invalid_request' : 'not_found',
          `no route for ${req.method} ${path}`,
          { status },
        )
      }
      await handler(req, res)
    } catch (error) {
      const failure = KinfError.isInstance(error)
        ? error
        : new KinfError('internal', (error as Error).message)
      if (failure.code === 'internal')
        context.log(`internal error: ${(error as Error).stack ?? failure.message}`, {
          level: 'error',
          request_id: context.requestIds?.get(res),
        })
      if (res.headersSent) {
        res.end()
        return
      }
      json(res, failure.status, openAiErrorBody(failure))
    }
  })
  guardNodeServer(server, context.config.server)
  return server
}

/**
 * /metrics and /health on the scorer's metrics port (null when config.metricsPort is). The
 * probes read /health: 503 from the start of a drain, so the pod leaves its Service while
 * the requests in flight finish, and scrapes go on until the end.
 */
export async function startScorerMetricsListener(
  config: Pick<ScorerConfig, 'metricsHost' | 'metricsPort'>,
  render: () => string,
  draining: () => boolean,
): Promise<MetricsListener | null> {
  if (config.metricsPort === null) return null
  return startMetricsListener({
    name: 'scorer metrics',
    host: config.metricsHost,
    port: config.metricsPort,
    render,
    probes: {
      '/health': () =>
        draining()
          ? { status: 503, body: { status: 'draining' } }
          : { status: 200, body: { status: 'ok' } },
    },
  })
}
