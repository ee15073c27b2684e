import type { LocalityConstraint } from '../crd/inference-policy.ts'
import { asciiHeaderValue, decisionHeaderOf } from '../policy/decision-header.ts'
import type { PolicyDecision, UpstreamTarget } from '../policy/policy-decision.ts'
import { kinferenceHeaders } from '../protocol/kinference-headers.ts'

export type ServeDecision = Extract<PolicyDecision, { kind: 'serve' }>

/**
 * What an attempt that did not serve the request came to. `answer` and `error` are what the
 * client gets when nothing follows (see Exhausted.failed).
 */
export type AttemptResult<A = unknown> =
  /** The pool was full and said so at once (the attempt allowed it: allowBurst). */
  | { kind: 'saturated'; answer?: A }
  /** The backend could not be reached, or failed in a way the next one may not. */
  | { kind: 'unavailable'; why: string; error: unknown }
  /** The backend declined this request (a provider's budget spent). */
  | { kind: 'refused'; why: string; error: unknown }
  /** Never tried: the backend cannot serve the request as asked, or is not served here. */
  | { kind: 'skipped'; why: string }

/** The next attempt to make, with what its answer carries. */
export interface AttemptStep {
  kind: 'try'
  /** Its position in decision.attempts. */
  index: number
  target: UpstreamTarget
  last: boolean
  /**
   * A local attempt may answer "saturated" at once instead of queueing: when something else
   * can be tried, or when waiting on a full pool would be the only way to serve a request
   * that must stay local (its constraint's clear refusal is better than the wait).
   */
  allowBurst: boolean
  /** The policy's part of x-kinference-decision for this attempt. */
  decisionHeader: string
  /** Why the attempts before it were passed over, for x-kinference-fallback. */
  notes: readonly string[]
  /**
   * An external attempt of a decision that has local ones: a burst, whether a local attempt
   * failed first or the policy, seeing the pool saturated, put it first (choose-targets.ts).
   */
  burst: boolean
}

/** Nothing left to try. */
export interface Exhausted<A = unknown> {
  kind: 'exhausted'
  /** decision.attempts.length: where the other side, handed the decision, goes on from. */
  from: number
  notes: readonly string[]
  /**
   * The request must stay in the cluster: the constraint that refuses it, and why the
   * in-cluster backends did not take it (null when the decision had none, so waiting
   * cannot help; see shared/policy/locality-refusal.ts).
   */
  keptLocal: { constraint: LocalityConstraint; busy: string | null } | null
  /** The last attempt, when it was made and failed: its answer or error is the client's. */
  failed: { step: AttemptStep; result: AttemptResult<A> } | null
}

export type PlanStep<A = unknown> = AttemptStep | Exhausted<A>

export interface AttemptPlanOptions {
  /** The constraint keeping the request local (shared/policy/held-local-by.ts), or null. */
  heldBy: LocalityConstraint | null
  /**
   * Where to start: where the scorer handed the decision over (RouteDecision's from and
   * notes, shared/scorer-api/route-protocol.ts); else the first attempt, no notes.
   */
  resume?: { from: number; notes: readonly string[] }
}

export interface AttemptPlanner<A = unknown> {
  first(): PlanStep<A>
  /** What follows an attempt that did not serve the request. */
  after(step: AttemptStep, result: AttemptResult<A>): PlanStep<A>
}

/**
 * The attempt loop of a serve decision, for the edge (serve-decision.ts) and the scorer
 * (handle-route.ts) alike: the attempts in order, an external one skipped when a constraint
 * keeps the request local (fail closed: the policy engine removed them already), each
 * passed-over attempt noted. A failed attempt moves on to the next unless it was the last;
 * a skipped one always does. The caller makes each attempt and reports what it yielded; the
 * scorer, which makes only local ones, hands the decision over at an external one (its
 * index and the notes so far), and the edge resumes there.
 */
export function attemptPlanner<A = unknown>(
  decision: ServeDecision,
  options: AttemptPlanOptions,
): AttemptPlanner<A> {
  const { attempts } = decision
  const { heldBy } = options
  const hasLocal = attempts.some((attempt) => attempt.locality !== 'External')
  const exhausted = (notes: string[], failed: Exhausted<A>['failed']): Exhausted<A> => ({
    kind: 'exhausted',
    from: attempts.length,
    notes,
    keptLocal: heldBy ? { constraint: heldBy, busy: hasLocal ? notes.join('; ') : null } : null,
    failed,
  })
  const stepFrom = (from: number, notes: string[]): PlanStep<A> => {
    for (let index = from; index < attempts.length; index++) {
      const target = attempts[index] as UpstreamTarget
      if (target.locality === 'External' && heldBy) {
        // Counted once, where the request is refused (keptLocal), not per skipped attempt.
        notes.push(`${target.backend}: kept local by ${heldBy.name}`)
        continue
      }
      const last = index === attempts.length - 1
      return {
        kind: 'try',
        index,
        target,
        last,
        allowBurst: !last || heldBy !== null,
        decisionHeader: decisionHeaderOf(decision, target),
        notes,
        burst: target.locality === 'External' && hasLocal,
      }
    }
    return exhausted(notes, null)
  }
  return {
    first: () => stepFrom(options.resume?.from ?? 0, [...(options.resume?.notes ?? [])]),
    after(step, result) {
      const why = result.kind === 'saturated' ? 'saturated' : result.why
      const notes = [...step.notes, `${step.target.backend}: ${why}`]
      if (step.last && result.kind !== 'skipped') return exhausted(notes, { step, result })
      return stepFrom(step.index + 1, notes)
    },
  }
}

/** x-kinference-fallback for an answer after passed-over attempts; none before the first. */
export function fallbackHeaders(notes: readonly string[]): Record<string, string> {
  return notes.length > 0
    ? { [kinferenceHeaders.fallback]: asciiHeaderValue(notes.join('; ')) }
    : {}
}
