import { randomUUID } from 'node:crypto'
import type { Agent, IncomingMessage, ServerResponse } from 'node:http'
import { finished } from 'node:stream'
import { type EdgeClaims, verifyEdgeRequest } from '../../shared/auth/edge-signature.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { KvIndex } from '../../shared/kv-index/kv-index.ts'
import type { RequestKind } from '../../shared/openai/openai-request.ts'
import type { PoolLookup } from '../../shared/pool/pool-router.ts'
import type { RouteResult } from '../../shared/routing/router-core.ts'
import type { Admitted } from './pool-admission.ts'
import type { PoolRuntime } from './pool-runtime.ts'
import { prepareRequest } from './prepare-request.ts'
import { proxyToPod } from './proxy-to-pod.ts'
import { parseJson, readBody } from './read-body.ts'
import type { ScorerConfig } from './scorer-config.ts'
import type { ScorerMetrics } from './scorer-metrics.ts'

export interface InferenceContext {
  config: ScorerConfig
  pools: readonly PoolRuntime[]
  index: KvIndex
  metrics: ScorerMetrics
  agent: Agent
  /** Pods seen reporting prompt_tokens_details: for them a missing cached_tokens means 0. */
  podsReportingCache: Set<string>
  random: () => number
  log: (message: string) => void
}

const passThroughHeaders = ['x-request-id', 'traceparent', 'tracestate', 'accept']

/**
 * One chat or completions request: check the edge's signature, tokenize, look the prompt's
 * blocks up in the index (one round trip), let the pool's strategy choose, and proxy. When
 * every candidate is saturated and the edge allows bursting, answer "saturated" at once;
 * otherwise, with late binding, a request its best pod cannot start now is held until it
 * can (see PoolAdmission). A pod that fails before the first byte is left out and the
 * request tried once more, at once.
 */
export async function handleInference(
  context: InferenceContext,
  kind: RequestKind,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const started = performance.now()
  const requestId = headerOf(req, 'x-request-id') ?? randomUUID()
  const body = await readBody(req, context.config.maxBodyBytes)
  const claims = await authenticate(context, req, body)
  const pools = allowedPools(context, claims)
  const prepared = prepareRequest(requestId, kind, parseJson(body), pools)
  const { pool } = prepared
  const { router } = pool
  if (router.podNames().length === 0)
    throw new KinfError('upstream_unavailable', `pool ${pool.name} has no pods`)
  const lookup = await router.lookup(prepared.request)
  const headers = Object.fromEntries(
    passThroughHeaders.flatMap((name) => {
      const value = headerOf(req, name)
      return value === undefined ? [] : [[name, value]]
    }),
  )
  headers['x-request-id'] = requestId
  const tried = new Set<string>()
  let heldMs = 0
  for (let attempt = 0; attempt < 2; attempt++) {
    let route: RouteResult
    if (attempt === 0) {
      const admitted = await admit(context, pool, lookup, claims.allowBurst, res)
      if (admitted === null) return // the client left while held: nothing was sent
      route = admitted.route
      heldMs = admitted.heldMs
    } else route = router.dispatchNow(lookup, performance.now(), { exclude: tried })
    const pod = route.decision.pod
    if (pod === null) break
    const score = route.decision.scores.find((s) => s.pod === pod)
    const predicted = route.predictedTtftMs.get(pod) ?? 0
    context.metrics.decisionSeconds
      .labels({ pool: pool.name })
      .observe((performance.now() - started - heldMs) / 1000)
    context.metrics.predictedTtftSeconds.labels({ pool: pool.name }).observe(predicted / 1000)
    const endpoint = pool.endpoint(pod)
    if (!endpoint) throw new KinfError('internal', `pod ${pod} has no endpoint`)
    const outcome = await proxyToPod(
      {
        podUrl: endpoint.http,
        path: kind === 'chat' ? '/v1/chat/completions' : '/v1/completions',
        body,
        headers,
        agent: context.agent,
        stream: prepared.stream,
        connectTimeoutMs: 5_000,
        extraHeaders: {
          'x-kinference-decision': `pool=${pool.name}; pod=${pod}; strategy=${router.strategy}; matched_tokens=${score?.cachedTokens ?? 0}; predicted_ttft_ms=${Math.round(predicted)}; held_ms=${Math.round(heldMs)}`,
          'x-kinference-reason': asciiHeader(route.decision.reason),
        },
        onFirstToken: () => {
          router.firstToken(requestId, performance.now())
          context.metrics.ttftSeconds.labels({ pod }).observe((performance.now() - started) / 1000)
        },
        onProgress: (generated) => router.progress(requestId, generated),
      },
      res,
    )
    const outcomeLabel = { pool: pool.name, pod, outcome: outcome.kind }
    context.metrics.requests.labels(outcomeLabel).inc()
    if (outcome.kind === 'completed') {
      if (outcome.cachedTokens !== null) context.podsReportingCache.add(pod)
      const reported =
        outcome.cachedTokens ??
        (outcome.usageSeen && context.podsReportingCache.has(pod) ? 0 : null)
      router.finished(requestId, performance.now(), outcome.status === 200 ? reported : null)
      context.metrics.matchedTokens.labels({ pod }).inc(score?.cachedTokens ?? 0)
      context.metrics.promptTokens.labels({ pod }).inc(prepared.request.routing.promptTokens)
      return
    }
    router.failed(requestId, performance.now(), outcome.kind !== 'client-gone')
    if (outcome.kind !== 'failed-before-bytes') return
    context.log(
      `${pod} failed before answering (${outcome.reason}); ${attempt === 0 ? 'retrying on the next best pod' : 'giving up'}`,
    )
    context.metrics.retries.labels({ pool: pool.name }).inc()
    tried.add(pod)
  }
  throw new KinfError('upstream_unavailable', `no pod of pool ${pool.name} could take the request`)
}

/**
 * The first attempt: "saturated" at once when the edge may burst and every pod is over
 * its limits (bursting beats waiting); otherwise through the pool's admission, which
 * dispatches now or holds the request until its best pod can start it. null: the client
 * left while held.
 */
async function admit(
  context: InferenceContext,
  pool: PoolRuntime,
  lookup: PoolLookup,
  allowBurst: boolean,
  res: ServerResponse,
): Promise<Admitted | null> {
  const { router } = pool
  let route: RouteResult | undefined
  if (allowBurst) {
    route = router.score(lookup, performance.now())
    if (route.decision.pod !== null && router.saturation(route).saturated) {
      context.metrics.saturated.labels({ pool: pool.name }).inc()
      throw new KinfError(
        'saturated',
        `pool ${pool.name} is saturated: every pod's predicted TTFT is over its limit`,
      )
    }
  }
  // Nothing is ever held without late binding: no need to watch the client.
  if (!pool.admission.enabled)
    return { route: router.dispatchNow(lookup, performance.now(), { route }), heldMs: 0 }
  const left = new AbortController()
  const onClose = () => left.abort()
  if (res.destroyed) left.abort()
  else res.once('close', onClose)
  try {
    return await pool.admission.admit(lookup, {
      signal: left.signal,
      answered: () => new Promise((resolve) => finished(res, () => resolve(undefined))),
      ...(route ? { route } : {}),
    })
  } finally {
    res.off('close', onClose)
  }
}

export async function authenticate(
  context: InferenceContext,
  req: IncomingMessage,
  body: Buffer,
): Promise<EdgeClaims> {
  const { signingSecrets, allowUnsigned } = context.config
  if (signingSecrets.length === 0 && allowUnsigned) {
    return { tenant: '', labels: [], backends: [], allowBurst: false }
  }
  const verified = await verifyEdgeRequest(
    signingSecrets,
    {
      method: req.method ?? 'POST',
      path: (req.url ?? '/').split('?')[0] ?? '/',
      body,
      headers: (name) => headerOf(req, name),
    },
    Date.now() / 1000,
  )
  if (verified.ok) return verified.claims
  if (allowUnsigned && headerOf(req, 'x-kinference-signature') === undefined) {
    return { tenant: '', labels: [], backends: [], allowBurst: false }
  }
  throw new KinfError('unauthorized', `request not signed by the edge: ${verified.reason}`)
}

/** The pools the edge's allowed backends point at; all pools when it names none. */
function allowedPools(context: InferenceContext, claims: EdgeClaims): readonly PoolRuntime[] {
  if (claims.backends.length === 0) return context.pools
  const names = new Set(
    claims.backends.flatMap((backend) => context.config.backends[backend]?.pool ?? []),
  )
  const pools = context.pools.filter((pool) => names.has(pool.name))
  if (pools.length === 0)
    throw new KinfError('forbidden', 'none of the backends this request may use is served here')
  return pools
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

function asciiHeader(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 512)
}
