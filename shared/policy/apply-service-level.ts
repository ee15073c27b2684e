import type { ServiceLevel } from '../crd/service-level.ts'
import type { ActionOutcome, SloShed } from './choose-targets.ts'
import type { PoolStatus, UpstreamTarget } from './policy-decision.ts'

/** A request's TTFT objective and where it came from. */
export interface TtftObjective {
  ttftMs: number
  from: 'policy' | 'header'
}

/**
 * The request's objective: the rule's ttftMs, or the client's header where the rule allows
 * it, held between minTtftMs and ttftMs (a client may ask for faster, never for slower than
 * the policy's objective, nor below its floor).
 */
export function ttftObjective(level: ServiceLevel, requestedMs: number | undefined): TtftObjective {
  if (!level.allowHeader || requestedMs === undefined)
    return { ttftMs: level.ttftMs, from: 'policy' }
  const ttftMs = Math.min(level.ttftMs, Math.max(level.minTtftMs, requestedMs))
  return { ttftMs, from: 'header' }
}

/**
 * Seconds until the best pod is predicted to start a request within its objective: the
 * predicted TTFT past the objective (the queue that must drain first), rounded up to whole
 * seconds, at least 1.
 */
export function drainSeconds(predictedTtftMs: number, objectiveMs: number): number {
  return Math.max(1, Math.ceil((predictedTtftMs - objectiveMs) / 1000))
}

/** The lowest predicted TTFT over the attempts' in-cluster pools; null when none is known. */
export function bestLocalTtft(
  attempts: readonly UpstreamTarget[],
  poolStatus: (poolId: string) => PoolStatus | undefined,
): number | null {
  let best: number | null = null
  for (const target of attempts) {
    if (target.locality !== 'InCluster' || target.pool === undefined) continue
    const predicted = poolStatus(target.pool)?.predictedTtftMs ?? null
    if (predicted !== null && (best === null || predicted < best)) best = predicted
  }
  return best
}

/**
 * A serving action's outcome under the rule's service level: unchanged (with a note) when
 * the best local pod is predicted to meet the request's objective, when no prediction is
 * known, or when the rule serves anyway; else shed (429), or reordered external first
 * (Burst, BurstOrShed). For BurstOrShed the outcome carries the shed to answer when locality
 * constraints leave no external attempt (evaluate-policy.ts applies them next).
 */
export function applyServiceLevel(
  level: ServiceLevel | undefined,
  requestedMs: number | undefined,
  outcome: ActionOutcome,
  poolStatus: (poolId: string) => PoolStatus | undefined,
): ActionOutcome {
  if (level === undefined || outcome.kind !== 'serve') return outcome
  const objective = ttftObjective(level, requestedMs)
  const goal = `TTFT objective ${objective.ttftMs} ms (${objective.from})`
  const best = bestLocalTtft(outcome.attempts, poolStatus)
  const note = (text: string) => ({
    ...outcome,
    reason: `${outcome.reason}; serviceLevel: ${text}`,
  })
  if (best === null) return note(`${goal}, no local prediction: served as decided`)
  if (best <= objective.ttftMs) return note(`${goal} met (best local predicted ${best} ms)`)
  const missed = `${goal} missed (best local predicted ${best} ms)`
  const shed: SloShed = {
    status: 429,
    code: 'slo_unattainable',
    message: `No pod can start this request within its time-to-first-token objective of ${objective.ttftMs} ms now; retry later.`,
    retryAfterSeconds: drainSeconds(best, objective.ttftMs),
  }
  switch (level.whenUnattainable) {
    case 'Serve':
      return note(`${missed}: served anyway (whenUnattainable Serve)`)
    case 'Shed':
      return { kind: 'reject', ...shed, reason: `${outcome.reason}; serviceLevel: ${missed}: shed` }
    default: {
      const external = outcome.attempts.filter((a) => a.locality === 'External')
      const local = outcome.attempts.filter((a) => a.locality !== 'External')
      return {
        kind: 'serve',
        attempts: [...external, ...local],
        reason: `${outcome.reason}; serviceLevel: ${missed}: external first, local as a last resort (whenUnattainable ${level.whenUnattainable})`,
        ...(level.whenUnattainable === 'BurstOrShed' ? { shedIfHeldLocal: shed } : {}),
      }
    }
  }
}
