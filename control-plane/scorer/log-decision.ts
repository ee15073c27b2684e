import type { InferenceContext } from './inference-context.ts'
import type { PreparedRequest } from './prepare-request.ts'
import type { ProxyOutcome } from './proxy-to-pod.ts'
import type { ServeOptions } from './serve-on-pool.ts'

/**
 * Logs the decision now and returns what logs its end: queued for the shared state's
 * decision log (decision-recorder.ts), so the request waits for no write.
 */
export function logDecision(
  context: Pick<InferenceContext, 'decisions' | 'replica' | 'podsReportingCache'>,
  prepared: PreparedRequest,
  options: Pick<ServeOptions, 'requestId' | 'startedMs' | 'decidedBy'>,
  chosen: { pod: string; matched: number; predicted: number; heldMs: number },
) {
  const { requestId, startedMs } = options
  const { pod } = chosen
  context.decisions.record({
    kind: 'decided',
    atMs: Date.now(),
    requestId,
    replica: context.replica,
    ...options.decidedBy,
    pool: prepared.pool.id,
    pod,
    strategy: prepared.pool.router.strategy,
    model: prepared.model,
    promptTokens: prepared.request.routing.promptTokens,
    matchedTokens: chosen.matched,
    predictedTtftMs: chosen.predicted,
    heldMs: chosen.heldMs,
  })
  const log = {
    firstTokenAtMs: null as number | null,
    ended(outcome: ProxyOutcome) {
      const completed = outcome.kind === 'completed' ? outcome : null
      context.decisions.record({
        kind: 'ended',
        atMs: Date.now(),
        requestId,
        pod,
        ttftMs: log.firstTokenAtMs === null ? null : log.firstTokenAtMs - startedMs,
        latencyMs: performance.now() - startedMs,
        // As the router takes it: absent from a pod known to report it means none cached.
        cachedTokens:
          completed === null
            ? null
            : (completed.cachedTokens ??
              (completed.usageSeen && context.podsReportingCache.has(pod) ? 0 : null)),
        outputTokens:
          completed?.generatedTokens ??
          (outcome.kind === 'failed-after-bytes' ? outcome.generatedTokens : null),
        outcome: outcome.kind,
        status: completed?.status ?? null,
      })
    },
  }
  return log
}
