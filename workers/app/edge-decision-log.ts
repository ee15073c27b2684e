import { reportedCachedTokens, type Usage } from '../../shared/openai/usage.ts'
import type { DecidedEntry, DecisionEntry, EndedEntry } from '../../shared/state/decision-entry.ts'
import { externalOutcome, externalStrategy } from '../../shared/state/external-strategy.ts'
import type { UpstreamOutcome } from './request-charge.ts'

/**
 * Where the edge writes the decisions it makes without the scorer (EdgeDeps.decisions): the
 * shared decision log the scorer writes too (shared/state/decision-entry.ts). On Node, a
 * decision recorder over the Redis state store (control-plane/kinfctl/commands/edge.ts).
 */
export interface EdgeDecisionLog {
  /** This edge's name in the log (DecidedEntry.replica), e.g. edge-<hostname>. */
  readonly replica: string
  /** Queues an entry: no I/O on the request's path, and never throws. */
  record(entry: DecisionEntry): void
}

/**
 * An external attempt the edge makes on a decision the scorer did not log: the policy had
 * no pool to ask about, or the scorer could not be reached, or an attempt after the one the
 * scorer handed over (serve-decision.ts says which).
 */
export interface EdgeExternalAttempt {
  /** When the provider was called (the edge's clock). */
  atMs: number
  /** The edge's id for the request (ServeContext.edgeId): the scorer keys its entries on it too. */
  edgeId: string
  /** The id the client gets back: its x-request-id when it sent a valid one, else edgeId. */
  requestId: string
  tenant: string
  policy: string
  rule: string
  backend: string
  /** The InferenceProvider id and the model there. */
  provider: string
  model: string
  promptTokens: number
}

/** How an external attempt ended, as far as the edge saw it. */
export interface ExternalAttemptEnd {
  atMs: number
  /** The answer's end, as metered (request-charge.ts). */
  outcome: UpstreamOutcome
  /** The provider's answer's status, or the status of the error it failed with; null unknown. */
  status: number | null
  /** When the provider's first event came (a streamed answer); null otherwise. */
  firstEventAtMs: number | null
  /** The client left (its request's signal aborted). */
  clientGone: boolean
}

/**
 * The decision entry of an external attempt, as the scorer writes the ones it hands back
 * (control-plane/scorer/state/log-decision.ts): the provider in place of the pool, its model
 * in place of the pod, strategy externalStrategy; nothing matched or predicted.
 */
export function edgeDecidedEntry(replica: string, attempt: EdgeExternalAttempt): DecidedEntry {
  return {
    kind: 'decided',
    atMs: attempt.atMs,
    requestId: attempt.edgeId,
    ...(attempt.requestId === attempt.edgeId ? {} : { clientRequestId: attempt.requestId }),
    replica,
    tenant: attempt.tenant,
    policy: attempt.policy,
    rule: attempt.rule,
    backend: attempt.backend,
    pool: attempt.provider,
    pod: attempt.model,
    strategy: externalStrategy,
    model: attempt.model,
    promptTokens: attempt.promptTokens,
    matchedTokens: 0,
    predictedTtftMs: 0,
    heldMs: 0,
  }
}

/**
 * Its end: served-by-edge (externalOutcome) when the provider answered in full, else the
 * scorer's words for a pod's (failed-before-bytes, failed-after-bytes, client-gone); TTFT
 * and latency from the call, the tokens its usage reported.
 */
export function edgeEndedEntry(attempt: EdgeExternalAttempt, end: ExternalAttemptEnd): EndedEntry {
  const usage = usageSeen(end.outcome)
  return {
    kind: 'ended',
    atMs: end.atMs,
    requestId: attempt.edgeId,
    pod: attempt.model,
    ttftMs: end.firstEventAtMs === null ? null : Math.max(0, end.firstEventAtMs - attempt.atMs),
    latencyMs: Math.max(0, end.atMs - attempt.atMs),
    cachedTokens: usage === null ? null : reportedCachedTokens(usage),
    outputTokens: usage?.completion_tokens ?? null,
    outcome: endOutcome(end),
    status: end.status,
  }
}

function endOutcome(end: ExternalAttemptEnd): string {
  switch (end.outcome.kind) {
    case 'answered':
      return externalOutcome
    case 'refused':
      return end.clientGone ? 'client-gone' : 'failed-before-bytes'
    case 'cut':
      return end.clientGone ? 'client-gone' : 'failed-after-bytes'
    case 'unanswered':
      return 'client-gone'
  }
}

function usageSeen(outcome: UpstreamOutcome): Usage | null {
  if (outcome.kind === 'answered') return outcome.usage
  if (outcome.kind === 'cut') return outcome.metered?.usage ?? null
  return null
}

/** One external attempt's entries: its decision when the provider is called, its end once. */
export interface ExternalAttemptLog {
  called(atMs: number): void
  ended(end: ExternalAttemptEnd): void
}

/**
 * Writes an attempt's entries to `log`. A log that throws despite its contract loses the
 * entry, never the request: `onError` hears of it.
 */
export function externalAttemptLog(
  log: EdgeDecisionLog,
  attempt: Omit<EdgeExternalAttempt, 'atMs'>,
  onError: (error: unknown) => void,
): ExternalAttemptLog {
  let called: EdgeExternalAttempt | null = null
  let open = false
  const record = (entry: DecisionEntry) => {
    try {
      log.record(entry)
    } catch (error) {
      onError(error)
    }
  }
  return {
    called(atMs) {
      called = { ...attempt, atMs }
      open = true
      record(edgeDecidedEntry(log.replica, called))
    },
    ended(end) {
      if (!open || called === null) return
      open = false
      record(edgeEndedEntry(called, end))
    },
  }
}
