import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { createJsonLog } from '../../shared/logging/json-log.ts'
import { openAiErrorBody } from '../../shared/openai/openai-error-body.ts'
import { builtinPlugins } from '../../shared/plugins.ts'
import { createEdgeDeps } from '../app/create-edge-deps.ts'
import { createEdgeApp } from '../app/edge-app.ts'
import { createEdgeMetrics } from '../app/edge-metrics.ts'
import { cloudflareClientAddress } from './cloudflare-client-address.ts'
import { createDurableObjectQuotaStore } from './durable-object-quota-store.ts'
import { createKvSnapshotLoader } from './kv-snapshot-loader.ts'
import { type WorkerBindings, WorkerEnv } from './worker-env.ts'
import { workerMetricsRoute } from './worker-metrics-route.ts'
import { startWorkerTracing, type WorkerTracing } from './worker-tracing.ts'

export { QuotaLedgerObject } from './quota-ledger-object.ts'

type Fetch = (request: Request, env: unknown, ctx: unknown) => Response | Promise<Response>

/** What the Worker needs of the runtime's ExecutionContext. */
interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void
}

/** One app per env object, i.e. per isolate: ports and the snapshot cache live this long. */
const apps = new WeakMap<object, Fetch>()

/** Every request but /healthz answered 500 with why the vars cannot be used. */
function misconfigured(reason: string): Fetch {
  const error = new KinfError('invalid_config', `the edge is misconfigured: ${reason}`, {
    status: 500,
  })
  return (request) =>
    new URL(request.url).pathname === '/healthz'
      ? new Response('ok')
      : Response.json(openAiErrorBody(error), { status: error.status })
}

function appFor(env: object): Fetch {
  const parsed = WorkerEnv.safeParse(env)
  if (!parsed.success) return misconfigured(z.prettifyError(parsed.error))
  const vars = parsed.data
  // JSON lines, which Workers Logs indexes field by field.
  const log = createJsonLog({
    service: 'edge',
    write: (line) => console.log(line.trimEnd()),
    nowMs: () => Date.now(),
    level: vars.KINFERENCE_LOG_LEVEL,
  })
  let tracing: WorkerTracing
  try {
    tracing = startWorkerTracing(vars, { fetch: (input, init) => fetch(input, init), log })
  } catch (error) {
    if (KinfError.isInstance(error)) return misconfigured(error.message)
    throw error
  }
  // The runtime supplies every binding wrangler.toml declares; only the vars and secrets,
  // set outside it, need the check above.
  const bindings = env as WorkerBindings
  // The strategies and conditions this Worker reads snapshots and rules with.
  const plugins = builtinPlugins
  const metrics = createEdgeMetrics()
  const metricsRoute = workerMetricsRoute(vars.METRICS_TOKEN, metrics)
  const app = createEdgeApp({
    ...createEdgeDeps({
      config: createKvSnapshotLoader(bindings.CONFIG, {
        ttlMs: vars.CONFIG_CACHE_SECONDS * 1000,
        nowMs: () => Date.now(),
        plugins,
      }),
      plugins,
      quotas: createDurableObjectQuotaStore(bindings.QUOTA_LEDGER),
      scorerUrls: [vars.SCORER_URL],
      signingSecret: vars.KINFERENCE_SIGNING_SECRET,
      awsCredentials:
        vars.AWS_ACCESS_KEY_ID && vars.AWS_SECRET_ACCESS_KEY
          ? {
              accessKeyId: vars.AWS_ACCESS_KEY_ID,
              secretAccessKey: vars.AWS_SECRET_ACCESS_KEY,
              ...(vars.AWS_SESSION_TOKEN ? { sessionToken: vars.AWS_SESSION_TOKEN } : {}),
            }
          : undefined,
      // Called through, not passed bare: workerd's fetch needs its own `this`.
      fetch: (input, init) => fetch(input, init),
      nowMs: () => Date.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      newRequestId: () => crypto.randomUUID(),
      log,
      clientAddress: cloudflareClientAddress,
      metrics,
    }),
    ...(tracing.tracer && { tracer: tracing.tracer }),
  })
  if (!tracing.tracer)
    return (request, _env, ctx) => metricsRoute(request) ?? app.fetch(request, env, ctx as never)
  return async (request, _env, ctx) => {
    const answered = metricsRoute(request)
    if (answered) return answered
    const response = await app.fetch(request, env, ctx as never)
    // After the answer: the export waits for the request's spans, which a stream ends later.
    ;(ctx as WaitUntil).waitUntil(tracing.flush())
    return response
  }
}

/**
 * The edge Worker: the same Hono app as on Node, with the config snapshot from KV, one
 * quota ledger Durable Object per tenant, the scorer over HTTPS and Bedrock through the
 * AWS SDK.
 */
export default {
  fetch(request: Request, env: object, ctx: unknown): Response | Promise<Response> {
    let handler = apps.get(env)
    if (!handler) {
      handler = appFor(env)
      apps.set(env, handler)
    }
    return handler(request, env, ctx)
  },
}
