import { type Context, Hono } from 'hono'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { errorCodeOfStatus, openAiErrorBody } from '../../shared/openai/openai-error-body.ts'
import type { RequestKind } from '../../shared/openai/openai-request.ts'
import { validRequestId } from '../../shared/openai/request-id.ts'
import { decisionHeadersVisible } from '../../shared/policy/decision-headers-visible.ts'
import { heldLocalBy } from '../../shared/policy/held-local-by.ts'
import { tenantModels } from '../../shared/policy/tenant-models.ts'
import { admitQuota, settleQuota } from './admit-quota.ts'
import { answer } from './answer-upstream.ts'
import { decideRequest, type EdgeOutcome } from './decide-request.ts'
import { type EdgeDeps, EdgeLimits } from './edge-deps.ts'
import { limitedAuthentication } from './limit-auth-failures.ts'
import { limitEventStream } from './limit-event-stream.ts'
import { localityError } from './locality-error.ts'
import {
  type EdgeRequest,
  labelsHeader,
  readBodyText,
  readEdgeRequest,
} from './read-edge-request.ts'
import { checkHeaderBytes } from './request-limits.ts'
import { answerContext, type ServeContext, serveDecision } from './serve-decision.ts'

const passThrough = ['x-request-id', 'traceparent', 'tracestate']

/** What a request's handlers share: the request id its answer and errors carry. */
type EdgeEnv = { Variables: { requestId: string } }

/**
 * The edge: OpenAI's API in front of the scorer and the external providers. Each request is
 * authenticated, parsed, labelled, admitted against the tenant's quota on an estimate,
 * decided by the policy (asking the scorer only when the decision depends on it), served,
 * and settled on the usage the answer reports. The same app runs in workerd and on Node;
 * the runtime supplies the ports.
 */
export function createEdgeApp(deps: EdgeDeps): Hono<EdgeEnv> {
  const app = new Hono<EdgeEnv>()
  const edgeLimits = EdgeLimits.parse({
    maxBodyBytes: deps.maxBodyBytes,
    defaultMaxTokens: deps.defaultMaxTokens,
    authFailuresPerMinute: deps.authFailuresPerMinute,
    ...deps.limits,
  })
  const { maxBodyBytes, defaultMaxTokens, authFailuresPerMinute } = edgeLimits
  const authenticated = limitedAuthentication({
    perMinute: authFailuresPerMinute,
    nowMs: deps.nowMs,
    clientAddress: deps.clientAddress ?? (() => null),
  })

  app.use(async (c, next) => {
    checkHeaderBytes(c.req.raw.headers, edgeLimits.maxHeaderBytes)
    await next()
  })
  app.get('/healthz', (c) => c.text('ok'))

  app.get('/v1/models', async (c) => {
    const snapshot = await deps.config()
    const { tenant } = await authenticated(c, snapshot)
    return c.json({
      object: 'list',
      data: tenantModels(snapshot, tenant).map((id) => ({
        id,
        object: 'model',
        created: 0,
        owned_by: 'kinference',
      })),
    })
  })

  const complete = (kind: RequestKind) => async (c: Context<EdgeEnv>) => {
    const raw = c.req.raw
    // The edge's own id keys the scorer's log and state; a client's x-request-id is passed
    // on and echoed only when it is a sane one (shared/openai/request-id.ts).
    const edgeId = deps.newRequestId()
    const requestId = validRequestId(raw.headers.get('x-request-id')) ?? edgeId
    c.set('requestId', requestId)
    const snapshot = await deps.config()
    const identity = await authenticated(c, snapshot)
    const text = await readBodyText(raw, maxBodyBytes)
    const request = readEdgeRequest(
      snapshot,
      kind,
      identity,
      text,
      raw.headers.get(labelsHeader) ?? undefined,
      deps.metrics,
      deps.detectPii,
      edgeLimits,
    )
    const policyId = snapshot.tenants[request.tenant]
    const tenant = snapshot.policies[policyId ?? '']?.spec.tenants.find(
      (t) => t.name === request.tenant,
    )
    const limits = tenant?.quotas ?? {}
    const reservedOutput = request.sequences * (request.maxTokens ?? defaultMaxTokens)
    const estimate = request.promptTokens + reservedOutput
    const admission = await admitQuota(deps, request.tenant, limits, estimate)
    if (!admission.admitted) {
      deps.metrics.inc('quota_exceeded', { limit: admission.limit })
      throw new KinfError('rate_limited', admission.message, {
        retryAfterSeconds: admission.retryAfterSeconds,
        openAiCode: admission.limit === 'tokens' ? 'tokens_per_minute' : 'requests_per_minute',
      })
    }
    let settled = false
    const charge = (tokens: number | Promise<number>) => {
      if (settled) return
      settled = true
      const work = Promise.resolve(tokens).then((actual) =>
        settleQuota(deps, request.tenant, limits, admission.reservation, estimate, actual),
      )
      keepAlive(c, work)
    }
    try {
      const passHeaders: Record<string, string> = { 'x-request-id': requestId }
      for (const name of passThrough) {
        const value = raw.headers.get(name)
        if (value !== null && name !== 'x-request-id') passHeaders[name] = value
      }
      const serving: ServeContext = {
        requestId,
        edgeId,
        passHeaders,
        signal: raw.signal,
        charge,
        basis: { promptTokens: request.promptTokens, reservedOutput },
        estimatedTokens: estimate,
        decisionHeaders: decisionHeadersVisible(snapshot, request.tenant),
        background: (work: Promise<unknown>) => keepAlive(c, work),
      }
      const claims = {
        tenant: request.tenant,
        labels: request.labels,
        backends: [],
        allowBurst: false,
        detectorFailed: request.detectorFailed,
        promptTokens: request.promptTokens,
        requestId: edgeId,
      }
      const outcome = await decideRequest(deps, snapshot, request, {
        claims,
        passHeaders,
        signal: raw.signal,
      })
      const response = limitEventStream(
        outcome.kind === 'served'
          ? await answer(outcome.response, request, answerContext(serving), {
              decision: null,
              notes: [],
            })
          : await carryOut(deps, snapshot, request, outcome, serving),
        edgeLimits,
        {
          nowMs: deps.nowMs,
          onCut: (why) => deps.log(`request ${requestId}: stream cut by the edge (${why})`),
        },
      )
      deps.metrics.inc('requests', { status: String(response.status) })
      return response
    } catch (error) {
      // A client that left before its answer had its prompt read (or being read) upstream;
      // a request refused or failed here used nothing.
      charge(raw.signal.aborted ? request.promptTokens : 0)
      throw error
    }
  }

  app.post('/v1/chat/completions', complete('chat'))
  app.post('/v1/completions', complete('completion'))

  app.notFound((c) =>
    c.json(
      openAiErrorBody(
        new KinfError('not_found', `no route for ${c.req.method} ${c.req.path}`, {
          openAiCode: 'unknown_url',
        }),
      ),
      404,
    ),
  )

  app.onError((error, c) => {
    const failure = KinfError.isInstance(error)
      ? error
      : new KinfError('internal', 'internal error', { cause: error })
    if (failure.code === 'internal') deps.log(`internal error: ${(error as Error).stack ?? error}`)
    const headers: Record<string, string> = {}
    if (failure.retryAfterSeconds !== undefined)
      headers['retry-after'] = String(Math.max(1, Math.ceil(failure.retryAfterSeconds)))
    const requestId =
      (c.get('requestId') as string | undefined) ?? validRequestId(c.req.header('x-request-id'))
    if (requestId) headers['x-request-id'] = requestId
    return c.json(openAiErrorBody(failure), failure.status as 400, headers)
  })

  return app
}

/** A decision made (by the edge or the scorer) and not yet served: refused, deferred, or tried. */
function carryOut(
  deps: EdgeDeps,
  snapshot: ConfigSnapshot,
  request: EdgeRequest,
  outcome: Extract<EdgeOutcome, { kind: 'decided' }>,
  serving: ServeContext,
): Promise<Response> {
  const { decision } = outcome
  if (decision.kind === 'reject') {
    deps.metrics.inc('rejected', { code: decision.code })
    // The policy decided without knowing what the scan could not read: the edge says it.
    const hold =
      decision.code === 'locality_violation'
        ? heldLocalBy(snapshot, decision.policy, request.labels, request.detectorFailed)
        : null
    if (hold) throw localityError(hold, request, null)
    const code =
      decision.code === 'locality_violation'
        ? 'locality_violation'
        : errorCodeOfStatus(decision.status)
    throw new KinfError(code, decision.message, {
      status: decision.status,
      openAiCode: decision.code,
      ...(decision.status === 503 ? { retryAfterSeconds: 5 } : {}),
    })
  }
  if (decision.kind === 'defer') {
    deps.metrics.inc('rejected', { code: 'deferred' })
    throw new KinfError(
      'rate_limited',
      `rule ${decision.rule}: deferred work runs only while the pool is idle enough (saturation ≤ ${decision.maxSaturation}); retry later`,
      { retryAfterSeconds: decision.retryAfterSeconds, openAiCode: 'deferred' },
    )
  }
  return serveDecision(deps, snapshot, request, decision, serving, outcome)
}

/** Work that must finish after the response: Workers' waitUntil; Node runs it anyway. */
function keepAlive(c: Context, work: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(work)
  } catch {
    // No ExecutionContext outside Workers: the promise completes on its own.
  }
}
