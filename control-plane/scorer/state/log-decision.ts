import { validRequestId } from '../../../shared/openai/request-id.ts'
import type { DecidedEntry } from '../../../shared/state/decision-entry.ts'
import { externalOutcome, externalStrategy } from '../../state/external-decision.ts'
import type { InferenceContext } from '../serving/inference-context.ts'
import type { PreparedRequest } from '../serving/prepare-request.ts'
import type { ProxyOutcome } from '../serving/proxy-to-pod.ts'

/** The decision log's tenant, policy, rule and backend of a request. */
export type DecidedBy = Pick<DecidedEntry, 'tenant' | 'policy' | 'rule' | 'backend'>

/** What the log keeps of a request being served (serve-on-pool.ts's ServeOptions has it). */
export interface LoggedRequest {
  requestId: string
  /** When the request arrived (performance.now()). */
  startedMs: number
  decidedBy: DecidedBy
  /** The headers the pod gets: the client's x-request-id among them. */
  headers?: Record<string, string>
}

/**
 * Logs the decision now and returns what logs its end: queued for the shared state's
 * decision log (decision-recorder.ts), so the request waits for no write. Keyed by the
 * request's own id; the client's x-request-id (from the headers the pod gets) is kept
 * beside it, once, when it is a request id and another one.
 */
export function logDecision(
  context: Pick<InferenceContext, 'decisions' | 'replica' | 'podsReportingCache'>,
  prepared: PreparedRequest,
  options: LoggedRequest,
  chosen: { pod: string; matched: number; predicted: number; heldMs: number },
) {
  const { requestId, startedMs } = options
  const { pod } = chosen
  const client = validRequestId(options.headers?.['x-request-id'])
  context.decisions.record({
    kind: 'decided',
    atMs: Date.now(),
    requestId,
    ...(client === null || client === requestId ? {} : { clientRequestId: client }),
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

/** An external attempt the scorer hands back to the edge, for logExternalDecision. */
export interface HandedOver {
  requestId: string
  /** When the request arrived (performance.now()). */
  startedMs: number
  decidedBy: DecidedBy
  /** The InferenceProvider id and the model there. */
  provider: string
  model: string
  promptTokens: number
  /** The client's x-request-id, as the edge passed it on. */
  clientRequestId?: string | undefined
}

/**
 * Logs a decision to serve a request from an external provider (a burst to Bedrock, or a
 * rule's route there): the edge serves it, so the scorer logs it when it hands it back,
 * with an end saying so at once (externalOutcome). The entry keeps the log's shape:
 * the provider in place of the pool, its model in place of the pod, strategy
 * externalStrategy; nothing matched or predicted, since no pod was asked.
 */
export function logExternalDecision(
  context: Pick<InferenceContext, 'decisions' | 'replica'>,
  handed: HandedOver,
): void {
  const { requestId, provider, model } = handed
  const client = validRequestId(handed.clientRequestId)
  const atMs = Date.now()
  context.decisions.record({
    kind: 'decided',
    atMs,
    requestId,
    ...(client === null || client === requestId ? {} : { clientRequestId: client }),
    replica: context.replica,
    ...handed.decidedBy,
    pool: provider,
    pod: model,
    strategy: externalStrategy,
    model,
    promptTokens: handed.promptTokens,
    matchedTokens: 0,
    predictedTtftMs: 0,
    heldMs: 0,
  })
  context.decisions.record({
    kind: 'ended',
    atMs,
    requestId,
    pod: model,
    ttftMs: null,
    latencyMs: performance.now() - handed.startedMs,
    cachedTokens: null,
    outputTokens: null,
    outcome: externalOutcome,
    status: null,
  })
}
