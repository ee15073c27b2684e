import { randomUUID } from 'node:crypto'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { openAiErrorBody } from '../../../shared/openai/openai-error-body.ts'
import type { RequestKind } from '../../../shared/openai/openai-request.ts'
import { validRequestId } from '../../../shared/openai/request-id.ts'
import type { SloShed } from '../../../shared/policy/choose-targets.ts'
import type { RouteResult } from '../../../shared/routing/pool-router.ts'
import { parseJson } from '../http/read-body.ts'
import type { LivePools, PoolLease } from '../pools/live-pools.ts'
import { isHeldTooLong } from '../pools/pool-admission.ts'
import type { PoolRuntime } from '../pools/pool-runtime.ts'
import { admitOnPool } from '../serving/admit-on-pool.ts'
import type { PoolAttempt } from '../serving/attempt-record.ts'
import type { ScorerContext } from '../serving/inference-context.ts'
import { lookupInSpan, tokenizeInSpan } from '../serving/lookup-spans.ts'
import { type HoldEnd, recordHold } from '../serving/pod-span.ts'
import { prepareEmbedding } from '../serving/prepare-embedding.ts'
import { type PreparedRequest, prepareRequest } from '../serving/prepare-request.ts'
import type { EndpointPicker, EppExchange, Pick, PickInput } from './endpoint-picker.ts'
import { shedByObjective } from './epp-objective.ts'
import { openPickTrail, type PickTrail } from './pick-trail.ts'
import { endpointAddress, PickedRequest } from './picked-request.ts'
import { allowedPods, rankedEndpoints } from './ranked-endpoints.ts'

/** What a routed request is: a chat or completion, or an embedding (routed on load alone). */
type RoutedKind = RequestKind | 'embeddings'

/** The OpenAI routes the picker scores; anything else goes to any ready endpoint. */
const routedPaths: Record<string, RoutedKind> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completion',
  '/v1/embeddings': 'embeddings',
}

/**
 * The fairness id gateways pass for token-fair admission: llm-d's header, then the older
 * Gateway API Inference Extension alias.
 */
const fairnessHeaders = ['x-llm-d-inference-fairness-id', 'x-gateway-inference-fairness-id']

/**
 * The scorer as a Gateway API Inference Extension Endpoint Picker: for a chat, completions
 * or embeddings request, the same decision the scorer makes for a request the edge sends
 * (prepare on the pool serving its model, look its blocks up, admit as the pool admits),
 * answered as endpoints instead of proxied; the gateway carries the answer and reports it,
 * and the router accounts for it as for its own.
 */
export function scorerEndpointPicker(context: ScorerContext, live: LivePools): EndpointPicker {
  let rotation = 0
  return {
    ready: () => live.current.pools.some((pool) => pool.router.podNames().length > 0),
    exchange: (signal) => new ScorerExchange(context, live, signal, () => rotation++),
  }
}

class ScorerExchange implements EppExchange {
  private readonly context: ScorerContext
  private readonly live: LivePools
  private readonly signal: AbortSignal
  private readonly nextRotation: () => number
  private lease: PoolLease | null = null
  private picked: PickedRequest | null = null
  private closed = false
  private answered: () => void = () => {}
  private readonly whenAnswered = new Promise<void>((resolve) => {
    this.answered = resolve
  })

  constructor(
    context: ScorerContext,
    live: LivePools,
    signal: AbortSignal,
    nextRotation: () => number,
  ) {
    this.context = context
    this.live = live
    this.signal = signal
    this.nextRotation = nextRotation
  }

  async pick(input: PickInput): Promise<Pick> {
    this.lease = this.live.lease()
    const trail = openPickTrail(this.context, input.headers, performance.now())
    try {
      const path = (input.headers[':path'] ?? '/').split('?')[0] ?? '/'
      const kind = input.headers[':method'] === 'POST' ? routedPaths[path] : undefined
      if (kind === undefined) {
        const given = validRequestId(input.headers['x-request-id'])
        if (given !== null) trail.identify(given)
        return trail.answered(this.pickAny(this.lease.pools, input.subset))
      }
      return trail.answered(await this.pickRouted(kind, input, this.lease.pools, trail))
    } catch (error) {
      if (KinfError.isInstance(error)) return trail.answered(refusal(error))
      trail.failed(error, this.signal.aborted)
      throw error
    }
  }

  responseHeaders(response: Parameters<EppExchange['responseHeaders']>[0]): void {
    this.picked?.responseHeaders(response)
  }

  responseBody(chunk: Buffer): void {
    this.picked?.responseBody(chunk)
  }

  close(outcome: 'completed' | 'aborted'): void {
    if (this.closed) return
    this.closed = true
    this.picked?.close(outcome)
    this.answered()
    this.lease?.release()
  }

  /**
   * A chat, completions or embeddings request: the pool serving its model, the scorer's
   * decision; its stages in their spans under the pick's, as for a request the edge sends.
   */
  private async pickRouted(
    kind: RoutedKind,
    input: PickInput,
    leased: readonly PoolRuntime[],
    trail: PickTrail,
  ): Promise<Pick> {
    const startedMs = performance.now()
    const given = validRequestId(input.headers['x-request-id'])
    const requestId = given ?? randomUUID()
    trail.identify(requestId)
    const tenant = fairnessHeaders.map((name) => input.headers[name]).find(Boolean) ?? ''
    if (tenant !== '') trail.note({ tenant })
    const pools =
      input.subset === null ? leased : leased.filter((p) => allowedPods(p, input.subset).size > 0)
    if (pools.length === 0) return noEndpoint('no endpoint of the subset hint is a pod of a pool')
    const prepared = await tokenizeInSpan(trail.scope, { requestId, pool: null }, () =>
      prepareRouted(kind, requestId, input.body, pools, tenant),
    )
    const { pool } = prepared
    const promptTokens = prepared.request.routing.promptTokens
    trail.note({ model: prepared.model, pool: pool.id, prompt_tokens: promptTokens })
    if (pool.router.podNames().length === 0) return noEndpoint(`pool ${pool.name} has no pods`)
    const attempt: PoolAttempt = await lookupInSpan(trail.scope, prepared, requestId, async () => ({
      prepared,
      lookup: await pool.lookup(prepared.request),
    }))
    const hold = (heldMs: number, end: HoldEnd) =>
      recordHold(trail.scope, { pool: pool.id, requestId }, heldMs, end)
    const admitted = await this.admit(attempt, input, hold)
    if ('refused' in admitted) return admitted.refused
    const { route, heldMs } = admitted
    const pod = route.decision.pod
    if (pod === null) return noEndpoint(`no pod of pool ${pool.name} is ready`)
    trail.note({
      pod,
      matched_tokens: route.decision.scores.find((s) => s.pod === pod)?.cachedTokens ?? 0,
      predicted_ttft_ms: route.predictedTtftMs.get(pod) ?? 0,
    })
    const headers: Record<string, string> = given === null ? { 'x-request-id': requestId } : {}
    const endpoint = pool.endpoint(pod)
    if (endpoint?.dataParallelRank != null)
      headers['x-data-parallel-rank'] = String(endpoint.dataParallelRank)
    this.picked = new PickedRequest(
      this.context,
      attempt,
      {
        requestId,
        startedMs,
        headers: { 'x-request-id': given ?? requestId },
        decidedBy: {
          tenant: tenant === '' ? null : tenant,
          policy: null,
          rule: null,
          backend: null,
        },
      },
      { route, pod, heldMs },
    )
    return { kind: 'endpoints', endpoints: rankedEndpoints(pool, route, input.subset), headers }
  }

  /**
   * The pool's admission, as for the edge's requests: dispatched now, or held while its
   * best pod cannot start it. Within a subset hint, only its pods, at once. A request whose
   * TTFT objective header its best pod is predicted to miss is shed before anything. A
   * request that waited for room gets its hold span (`hold`) once the wait is over.
   */
  private async admit(
    attempt: PoolAttempt,
    input: PickInput,
    hold: (heldMs: number, end: HoldEnd) => void,
  ): Promise<{ route: RouteResult; heldMs: number } | { refused: Pick }> {
    const { router } = attempt.prepared.pool
    const nowMs = performance.now()
    if (input.subset !== null) {
      const allowed = allowedPods(attempt.prepared.pool, input.subset)
      const exclude = new Set(router.podNames().filter((name) => !allowed.has(name)))
      return { route: router.dispatchNow(attempt.lookup, nowMs, { exclude }), heldMs: 0 }
    }
    const scored = router.score(attempt.lookup, nowMs)
    const shed = shedByObjective(input.headers, router.prediction(attempt.lookup, scored))
    if (shed !== null) {
      this.context.metrics.saturated.labels({ pool: attempt.prepared.pool.name }).inc()
      return { refused: refusal(shed) }
    }
    const sinceMs = performance.now()
    const admitted = await admitOnPool(this.context, { ...attempt, scored }, false, {
      gone: this.signal,
      answered: () => this.whenAnswered,
    }).catch((error: unknown) => {
      // Held to the end of its hold (429), or answered by a shutdown while held.
      const heldMs = performance.now() - sinceMs
      if (isHeldTooLong(error)) hold(heldMs, 'expired')
      else if (heldMs >= 1) hold(heldMs, 'failed')
      throw error
    })
    if (admitted === null) {
      // The gateway went away while the request was held: nothing is left to answer.
      const heldMs = performance.now() - sinceMs
      if (heldMs >= 1) hold(heldMs, 'client-gone')
      throw new Error('the gateway closed the stream')
    }
    if ('saturated' in admitted)
      return { refused: refusal(new KinfError('saturated', admitted.saturated)) }
    if (admitted.heldMs > 0) hold(admitted.heldMs, 'dispatched')
    return admitted
  }

  /** Not a routed request (GET /v1/models, say): any ready endpoint, rotating. */
  private pickAny(pools: readonly PoolRuntime[], subset: readonly string[] | null): Pick {
    const addresses = [
      ...new Set(pools.flatMap((pool) => pool.endpoints().map((pod) => endpointAddress(pod.http)))),
    ].filter((address) => subset === null || subset.includes(address))
    if (addresses.length === 0) return noEndpoint('no endpoint is ready')
    const at = this.nextRotation() % addresses.length
    return {
      kind: 'endpoints',
      endpoints: [...addresses.slice(at), ...addresses.slice(0, at)],
      headers: {},
    }
  }
}

/**
 * The request prepared as the scorer's own routes prepare it: an embedding for the pool
 * serving its model with task Embed, keyless (serving/prepare-embedding.ts).
 */
function prepareRouted(
  kind: RoutedKind,
  requestId: string,
  body: Buffer,
  pools: readonly PoolRuntime[],
  tenant: string,
): PreparedRequest {
  if (kind === 'embeddings') return prepareEmbedding(requestId, parseJson(body), pools, tenant)
  return prepareRequest(requestId, kind, parseJson(body), pools, body.toString('utf8'), tenant)
}

function noEndpoint(message: string): Pick {
  return refusal(new KinfError('upstream_unavailable', message, { status: 503 }))
}

/** An error as the gateway's ImmediateResponse: its status, OpenAI's JSON, Retry-After on 429/503. */
function refusal(error: KinfError | SloShed): Pick {
  const failure = KinfError.isInstance(error)
    ? error
    : new KinfError('rate_limited', error.message, { status: error.status, openAiCode: error.code })
  const retryAfter = 'retryAfterSeconds' in error ? error.retryAfterSeconds : 1
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (failure.status === 429 || failure.status === 503) headers['retry-after'] = String(retryAfter)
  return {
    kind: 'refused',
    status: failure.status,
    body: JSON.stringify(openAiErrorBody(failure)),
    headers,
  }
}
