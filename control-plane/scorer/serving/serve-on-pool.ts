import type { ServerResponse } from 'node:http'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { asciiHeaderValue } from '../../../shared/policy/decision-header.ts'
import { kinferenceHeaders } from '../../../shared/protocol/kinference-headers.ts'
import type { HoldTerms, RouteResult } from '../../../shared/routing/pool-router.ts'
import { promptTokensHeader } from '../../../shared/scorer-api/route-protocol.ts'
import { isHeldTooLong } from '../pools/pool-admission.ts'
import type { DecidedBy } from '../state/log-decision.ts'
import { admitOnPool, responseLink } from './admit-on-pool.ts'
import {
  type ChosenPod,
  openAttemptRecord,
  type PoolAttempt,
  recordCompleted,
} from './attempt-record.ts'
import type { PodContext } from './inference-context.ts'
import { openPodSpan, recordHold } from './pod-span.ts'
import { type ProxyOutcome, proxyToPod } from './proxy-to-pod.ts'
import type { RequestTrail } from './request-trail.ts'

/** A pod that takes this long to accept a connection is down (it answers in ms when up). */
const connectTimeoutMs = 5_000
/**
 * How long a pod may take to start its answer once connected. A non-streamed answer starts
 * with its last token, so this is a whole generation's time (vLLM sets no limit): the
 * official OpenAI clients' own default timeout, so the scorer never gives up first.
 */
const responseTimeoutMs = 600_000

export interface ServeOptions {
  requestId: string
  /** When the request arrived (performance.now()), for the decision, TTFT and e2e histograms. */
  startedMs: number
  /** The body the pod gets: the client's bytes, unless the edge's decision changed them. */
  body: Buffer
  /** Passed through to the pod (request id, trace context, accept). */
  headers: Record<string, string>
  /** "Saturated" at once instead of queueing when every pod is over its limits. */
  allowBurst: boolean
  /** Put before this pool's part of x-kinference-decision (the policy's, when it decided here). */
  decisionPrefix?: string
  /** Added to the answer (e.g. x-kinference-fallback, x-kinference-prompt-tokens). */
  extraHeaders?: Record<string, string>
  /** Who asked and what chose the backend, for the decision log. */
  decidedBy: DecidedBy
  /** The rule's band and hold for the pool's admission (holdTermsOf). */
  hold?: HoldTerms
  /** The rule bursts a request its hold could not start (whenUnattainable Burst, BurstOrShed). */
  burstWhenHeldTooLong?: boolean
  /** The request's spans and access line (request-trail.ts); absent: neither. */
  trail?: RequestTrail
}

/**
 * How serving on a pool ended, when it did not fail: the answer sent (or the client gone),
 * or the pool saturated (only when options.allowBurst), nothing sent, for the caller to try
 * elsewhere or to answer (admit-on-pool.ts's answerSaturated).
 */
export type PoolServed = { kind: 'served' } | { kind: 'saturated'; message: string }

/**
 * Sends a prepared request to the best pod of its pool and streams the answer back: the
 * first attempt through the pool's admission ("saturated" at once when the edge may burst
 * and every pod is over its limits; held by late binding while its best pod cannot start
 * it); a request that fails before the first byte is tried once more on another pod, at
 * once, unless its failure is its own (afterFailure). Resolves once the answer is sent (or
 * the client left), or with the pool saturated; throws KinfError upstream_unavailable when
 * no pod could take it, or a 504 when the pod did not answer within the response timeout.
 */
export async function serveOnPool(
  context: PodContext,
  attempt: PoolAttempt,
  res: ServerResponse,
  options: ServeOptions,
): Promise<PoolServed> {
  const { prepared, lookup } = attempt
  const { pool } = prepared
  const { router } = pool
  if (router.podNames().length === 0)
    throw new KinfError('upstream_unavailable', `pool ${pool.name} has no pods`)
  const { requestId } = options
  const tried = new Set<string>()
  let heldMs = 0
  for (let round = 0; round < 2; round++) {
    let route: RouteResult
    if (round === 0) {
      const admitted = await admitFirst(context, attempt, res, options)
      if (admitted === null) return { kind: 'served' } // the client left while held: nothing was sent
      if ('saturated' in admitted) return { kind: 'saturated', message: admitted.saturated }
      route = admitted.route
      heldMs = admitted.heldMs
    } else route = router.dispatchNow(lookup, performance.now(), { exclude: tried })
    const pod = route.decision.pod
    if (pod === null) break
    const finalAttempt = round === 1 || router.podNames().length <= 1
    const outcome = await sendToPod(context, attempt, res, options, {
      route,
      pod,
      heldMs,
      finalAttempt,
      attempt: round + 1,
    })
    context.metrics.requests.labels({ pool: pool.name, pod, outcome: outcome.kind }).inc()
    if (outcome.kind === 'completed') {
      recordCompleted(context, attempt, options, { pod, route }, outcome)
      return { kind: 'served' }
    }
    const next = afterFailure(outcome)
    router.failed(requestId, performance.now(), next.podAtFault)
    if (outcome.kind === 'failed-after-bytes')
      context.log(`${pod} broke off its answer: ${outcome.reason}`, {
        level: 'warn',
        request_id: requestId,
        pod,
      })
    if (outcome.kind !== 'failed-before-bytes') return { kind: 'served' }
    if (!next.retry) throw requestFailure(pod, outcome.reason)
    context.log(
      `${pod} failed before answering (${outcome.reason}); ${round === 0 ? 'retrying on the next best pod' : 'giving up'}`,
      { level: 'warn', request_id: requestId, pod, cause: outcome.cause },
    )
    context.metrics.retries.labels({ pool: pool.name }).inc()
    tried.add(pod)
  }
  throw new KinfError('upstream_unavailable', `no pod of pool ${pool.name} could take the request`)
}

/**
 * What a failed attempt means: whether the pod is left out for the cool-down, and whether
 * the request is tried on another pod. Only a pod that cannot be reached (or says it
 * cannot serve) is at fault; a request that timed out or failed on a pod that otherwise
 * answers leaves the pod as it was, and is not sent to another one as if the first were
 * broken, except a 5xx before any byte, which one more pod may serve.
 */
export function afterFailure(outcome: Exclude<ProxyOutcome, { kind: 'completed' }>): {
  podAtFault: boolean
  retry: boolean
} {
  switch (outcome.kind) {
    case 'client-gone':
      return { podAtFault: false, retry: false }
    case 'failed-after-bytes':
      // A stream cut off mid-answer: the connection broke, as a killed pod's does.
      return { podAtFault: true, retry: false }
    case 'failed-before-bytes':
      return {
        podAtFault: outcome.cause === 'pod-down' || outcome.cause === 'pod-unavailable',
        retry: outcome.cause !== 'timeout',
      }
  }
}

/** A request that outlived the response timeout on a pod: 504, and the pod stays as it was. */
function requestFailure(pod: string, reason: string): KinfError {
  return new KinfError('upstream_error', `pod ${pod} did not answer the request: ${reason}`, {
    status: 504,
  })
}

/**
 * The first attempt's admission (admitOnPool), watching the client while held; a request
 * that waited for room gets its `kinference.hold` span once the wait is over.
 */
async function admitFirst(
  context: PodContext,
  attempt: PoolAttempt,
  res: ServerResponse,
  options: ServeOptions,
) {
  const client = responseLink(res)
  const scope = options.trail?.scope
  const facts = { pool: attempt.prepared.pool.id, requestId: options.requestId }
  const sinceMs = performance.now()
  try {
    const admitted = await admitOnPool(
      context,
      attempt,
      options.allowBurst,
      client,
      options.hold,
      options.burstWhenHeldTooLong,
    )
    if (admitted === null) {
      // Null at once: the client had left before it was offered (nothing was held).
      const heldMs = performance.now() - sinceMs
      if (heldMs >= 1) recordHold(scope, facts, heldMs, 'client-gone')
    } else if ('saturated' in admitted) {
      if (admitted.heldMs !== undefined) recordHold(scope, facts, admitted.heldMs, 'saturated')
    } else if (admitted.heldMs > 0) recordHold(scope, facts, admitted.heldMs, 'dispatched')
    return admitted
  } catch (error) {
    // Held to the end of its rule's hold (429), or answered by a shutdown while held.
    const heldMs = performance.now() - sinceMs
    if (isHeldTooLong(error)) recordHold(scope, facts, heldMs, 'expired')
    else if (heldMs >= 1) recordHold(scope, facts, heldMs, 'failed')
    throw error
  } finally {
    client.release()
  }
}

interface Chosen extends ChosenPod {
  finalAttempt: boolean
  /** 1 for the first attempt, 2 for the retry. */
  attempt: number
}

/** One attempt: the decision logged and measured, the request proxied to the pod. */
async function sendToPod(
  context: PodContext,
  attempt: PoolAttempt,
  res: ServerResponse,
  options: ServeOptions,
  chosen: Chosen,
): Promise<ProxyOutcome> {
  const { prepared } = attempt
  const { pool } = prepared
  const { route, pod } = chosen
  const endpoint = pool.endpoint(pod)
  if (!endpoint) throw new KinfError('internal', `pod ${pod} has no endpoint`)
  const record = openAttemptRecord(context, attempt, options, chosen)
  const { trail } = options
  trail?.note({ pool: pool.id, pod })
  const podCall = openPodSpan(trail?.scope, {
    operation: prepared.operation,
    model: prepared.model,
    maxTokens: prepared.maxTokens,
    stream: prepared.stream,
    podUrl: endpoint.http,
    pod,
    pool: pool.id,
    requestId: options.requestId,
    promptTokens: prepared.request.routing.promptTokens,
    matchedTokens: route.decision.scores.find((s) => s.pod === pod)?.cachedTokens ?? 0,
    predictedTtftMs: route.predictedTtftMs.get(pod) ?? 0,
    attempt: chosen.attempt,
  })
  const outcome = await proxyToPod(
    {
      podUrl: endpoint.http,
      dataParallelRank: endpoint.dataParallelRank,
      path: prepared.podPath,
      body: options.body,
      headers: podCall.headers(options.headers),
      agent: context.agent,
      stream: prepared.stream,
      connectTimeoutMs,
      responseTimeoutMs,
      finalAttempt: chosen.finalAttempt,
      extraHeaders: {
        ...options.extraHeaders,
        [promptTokensHeader]: String(prepared.request.routing.promptTokens),
        [kinferenceHeaders.decision]: options.decisionPrefix
          ? `${options.decisionPrefix}; ${record.here}`
          : record.here,
        [kinferenceHeaders.reason]: asciiHeaderValue(route.decision.reason),
      },
      onFirstToken: () => {
        record.firstToken()
        podCall.firstChunk()
        trail?.note({ ttft_ms: performance.now() - options.startedMs })
      },
      onProgress: record.progress,
    },
    res,
  )
  record.log.ended(outcome)
  podCall.ended(outcome)
  if (outcome.kind === 'completed')
    trail?.note({
      answered_by: 'pod',
      prompt_tokens: outcome.promptTokens ?? prepared.request.routing.promptTokens,
      cached_tokens: outcome.cachedTokens,
      completion_tokens: outcome.generatedTokens,
    })
  return outcome
}
