import type { PoolLookup, RouteResult } from '../../../shared/routing/pool-router.ts'
import { type LoggedRequest, logDecision } from '../state/log-decision.ts'
import type { MeteredAnswer } from './answer-meter.ts'
import type { PodContext } from './inference-context.ts'
import type { PreparedRequest } from './prepare-request.ts'

/** A request prepared for one pool and looked up there, ready to go to a pod. */
export interface PoolAttempt {
  prepared: PreparedRequest
  lookup: PoolLookup
  /** A score taken just now (for the pool's status), reused by the first admission. */
  scored?: RouteResult
}

/** The pod chosen for an attempt, and how long the request was held for it. */
export interface ChosenPod {
  route: RouteResult
  pod: string
  heldMs: number
}

/**
 * An attempt on a pod starts: the decision measured and logged; the record's callbacks
 * tell the router and the metrics of its first token and progress, whoever carries the
 * answer (the scorer's proxy, or the gateway the Endpoint Picker answers).
 */
export function openAttemptRecord(
  context: PodContext,
  { prepared }: Pick<PoolAttempt, 'prepared'>,
  options: LoggedRequest,
  { route, pod, heldMs }: ChosenPod,
) {
  const { pool } = prepared
  const { router } = pool
  const matched = route.decision.scores.find((s) => s.pod === pod)?.cachedTokens ?? 0
  const predicted = route.predictedTtftMs.get(pod) ?? 0
  context.metrics.decisionSeconds
    .labels({ pool: pool.name })
    .observe((performance.now() - options.startedMs - heldMs) / 1000)
  context.metrics.predictedTtftSeconds.labels({ pool: pool.name }).observe(predicted / 1000)
  const log = logDecision(context, prepared, options, { pod, matched, predicted, heldMs })
  return {
    log,
    /** The x-kinference-decision of this pool's part. */
    here: `pool=${pool.name}; pod=${pod}; strategy=${router.strategy}; matched_tokens=${matched}; predicted_ttft_ms=${Math.round(predicted)}; held_ms=${Math.round(heldMs)}`,
    firstToken: () => {
      const nowMs = performance.now()
      log.firstTokenAtMs = nowMs
      router.firstToken(options.requestId, nowMs)
      const ttftMs = nowMs - options.startedMs
      context.metrics.ttftSeconds.labels({ pool: pool.name, pod }).observe(ttftMs / 1000)
      if (ttftMs > 0)
        context.metrics.predictionError
          .labels({ pool: pool.name })
          .observe(Math.abs(ttftMs - predicted) / ttftMs)
    },
    progress: (generated: number) =>
      router.progress(options.requestId, generated, performance.now()),
  }
}

/** The answer reached the client: the router, the guard and the metrics learn how it went. */
export function recordCompleted(
  context: PodContext,
  { prepared, lookup }: Pick<PoolAttempt, 'prepared' | 'lookup'>,
  options: Pick<LoggedRequest, 'requestId' | 'startedMs'>,
  { pod, route }: { pod: string; route: RouteResult },
  outcome: { status: number } & MeteredAnswer,
): void {
  const { pool } = prepared
  const matched = route.decision.scores.find((s) => s.pod === pod)?.cachedTokens ?? 0
  if (outcome.cachedTokens !== null) context.podsReportingCache.add(pod)
  const reported =
    outcome.cachedTokens ?? (outcome.usageSeen && context.podsReportingCache.has(pod) ? 0 : null)
  // A request routed without block keys predicted nothing: the pod's trust learns nothing.
  const answered = outcome.status === 200 && !prepared.estimated
  pool.router.finished(options.requestId, performance.now(), answered ? reported : null)
  if (answered)
    guard(
      context,
      { prepared, lookup },
      options.requestId,
      { pod, route },
      {
        promptTokens: outcome.promptTokens,
        cachedTokens: reported,
      },
    )
  context.metrics.matchedTokens.labels({ pool: pool.name, pod }).inc(matched)
  context.metrics.promptTokens
    .labels({ pool: pool.name, pod })
    .inc(prepared.request.routing.promptTokens)
  context.metrics.e2eSeconds
    .labels({ pool: pool.name })
    .observe((performance.now() - options.startedMs) / 1000)
}

/**
 * The runtime guard (TokenizationGuard): the scorer's prompt count against the pod's
 * usage.prompt_tokens, the index's prediction against its cached_tokens (unless the
 * scorer did not believe its index for the pod: replaying, or demoted to load-only).
 */
function guard(
  context: PodContext,
  { prepared, lookup }: Pick<PoolAttempt, 'prepared' | 'lookup'>,
  requestId: string,
  { pod, route }: { pod: string; route: RouteResult },
  usage: { promptTokens: number | null; cachedTokens: number | null },
): void {
  const { pool } = prepared
  const believed = route.candidates.find((c) => c.name === pod)?.trust !== 'load-only'
  const compared = pool.guard.observe({
    requestId,
    model: prepared.model,
    pod,
    scorerPromptTokens: prepared.request.routing.promptTokens,
    reportedPromptTokens: usage.promptTokens,
    predictedCachedTokens: believed ? pool.router.matchedTokens(lookup, pod) : null,
    reportedCachedTokens: usage.cachedTokens,
    blockSize: prepared.request.routing.blockSize,
    atMs: Date.now(),
  })
  for (const { kind, agrees } of compared) {
    context.metrics.tokenComparisons.labels({ pool: pool.name, kind }).inc()
    if (!agrees) context.metrics.tokenDisagreements.labels({ pool: pool.name, kind }).inc()
  }
}
