import { Hono } from 'hono'
import {
  createMemoryResponseStore,
  defaultResponseTtlMs,
} from '../../shared/openai/responses/response-store.ts'
import { answerError, answerNotFound } from './answer-error.ts'
import { type EdgeDeps, EdgeLimits } from './edge-deps.ts'
import { logEdgeAccess } from './log-edge-access.ts'
import { meterEdgeRequests } from './meter-edge-requests.ts'
import { type EdgeRequestObserver, observeEdgeRequests } from './observe-edge-requests.ts'
import { serveResponses } from './responses/serve-responses.ts'
import { admitEmbedding } from './stages/admit-embedding.ts'
import { admitRequest } from './stages/admit-request.ts'
import { answerRequestId } from './stages/answer-request-id.ts'
import { authenticateTenant } from './stages/authenticate-tenant.ts'
import { decide } from './stages/decide.ts'
import { decideEmbedding } from './stages/decide-embedding.ts'
import type { EdgeEnv } from './stages/edge-stage.ts'
import { inOrder } from './stages/edge-stage.ts'
import { limitHeaders } from './stages/limit-headers.ts'
import { listModels, retrieveModel } from './stages/list-models.ts'
import { readEmbedding } from './stages/read-embedding.ts'
import { readRequest } from './stages/read-request.ts'
import { serveEmbedding } from './stages/serve-embedding.ts'
import { serveOutcome } from './stages/serve-outcome.ts'
import { tagRequest } from './stages/tag-request.ts'
import { tenantTerms } from './stages/tenant-terms.ts'
import { traceEdgeRequests } from './trace-edge-requests.ts'

/**
 * The edge: OpenAI's API in front of the scorer and the external providers. A completion
 * (or an embedding, through its own read, quota, policy and serve stages) goes through the
 * stages below in order, each a Hono middleware that reads what earlier
 * ones set on the context (stages/edge-stage.ts) and sets its own; any stage's error is
 * answered in OpenAI's shape (answer-error.ts). The same app runs in workerd and on Node;
 * the runtime supplies the ports (edge-deps.ts).
 */
export function createEdgeApp(deps: EdgeDeps): Hono<EdgeEnv> {
  const limits = EdgeLimits.parse({
    maxBodyBytes: deps.maxBodyBytes,
    defaultMaxTokens: deps.defaultMaxTokens,
    authFailuresPerMinute: deps.authFailuresPerMinute,
    ...deps.limits,
  })
  const authenticate = authenticateTenant({
    config: deps.config,
    perMinute: limits.authFailuresPerMinute,
    nowMs: deps.nowMs,
    clientAddress: deps.clientAddress ?? (() => null),
  })
  const complete = (kind: 'chat' | 'completion') =>
    inOrder(
      tagRequest(deps.newRequestId),
      authenticate,
      tenantTerms(),
      readRequest(kind, deps, limits),
      admitRequest(deps, limits.defaultMaxTokens),
      decide(deps),
      serveOutcome(deps, limits),
    )

  const app = new Hono<EdgeEnv>()
  // /v1/responses hands its request to the chat route, which counts it: not counted twice.
  const handedOver = new WeakSet<Request>()
  const internal = new WeakSet<Request>()
  const observers: EdgeRequestObserver[] = [
    ...(deps.tracer ? [traceEdgeRequests(deps.tracer)] : []),
    meterEdgeRequests(deps.metrics),
    ...(deps.accessLog === false ? [] : [logEdgeAccess(deps.log)]),
  ]
  app.use(
    observeEdgeRequests({
      nowMs: deps.nowMs,
      observers,
      handedOver: (request) => handedOver.has(request),
      internal: (request) => internal.has(request),
    }),
  )
  app.use(...inOrder(answerRequestId(deps.newRequestId), limitHeaders(limits.maxHeaderBytes)))
  app.get('/healthz', (c) => c.text('ok'))
  app.get('/v1/models', ...inOrder(authenticate, listModels()))
  app.get('/v1/models/*', ...inOrder(authenticate, retrieveModel()))
  app.post('/v1/chat/completions', ...complete('chat'))
  app.post('/v1/completions', ...complete('completion'))
  app.post(
    '/v1/embeddings',
    ...inOrder(
      tagRequest(deps.newRequestId),
      authenticate,
      tenantTerms(),
      readEmbedding(deps, limits),
      admitEmbedding(deps),
      decideEmbedding(deps),
      serveEmbedding(deps),
    ),
  )
  app.post(
    '/v1/responses',
    ...inOrder(
      tagRequest(deps.newRequestId),
      authenticate,
      serveResponses({
        store: deps.responses ?? createMemoryResponseStore({ nowMs: deps.nowMs }),
        ttlMs: defaultResponseTtlMs,
        maxBodyBytes: limits.maxBodyBytes,
        nowMs: deps.nowMs,
        newId: () => deps.newRequestId().replaceAll('-', ''),
        chat: async (request, env) => app.fetch(request, env as never),
        handedOver: (outer, inner) => {
          handedOver.add(outer)
          internal.add(inner)
        },
      }),
    ),
  )
  app.notFound(answerNotFound)
  app.onError(answerError(deps.log))
  return app
}
