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

/** What the scorer predicts for the best pod of a pool: TTFT, and time per output token. */
export interface LocalPrediction {
  ttftMs: number
  tpotMs: number | null
}

/**
 * The prediction of the in-cluster pool with the lowest predicted TTFT over the attempts;
 * null when none is known.
 */
export function bestLocalPrediction(
  attempts: readonly UpstreamTarget[],
  poolStatus: (poolId: string) => PoolStatus | undefined,
): LocalPrediction | null {
  let best: LocalPrediction | null = null
  for (const target of attempts) {
    if (target.locality !== 'InCluster' || target.pool === undefined) continue
    const status = poolStatus(target.pool)
    const ttftMs = status?.predictedTtftMs ?? null
    if (ttftMs !== null && (best === null || ttftMs < best.ttftMs))
      best = { ttftMs, tpotMs: status?.predictedTpotMs ?? null }
  }
  return best
}

/** How a request's objectives stand against the best local pod's predictions. */
export type ObjectiveVerdict =
  | { kind: 'unknown'; objective: TtftObjective }
  | { kind: 'met'; objective: TtftObjective; predicted: LocalPrediction }
  | { kind: 'missed'; objective: TtftObjective; predicted: LocalPrediction; shed: SloShed }

/**
 * The request's objectives judged against `predicted` (null: no prediction, which never
 * refuses): its TTFT, and its time per output token where the level sets tpotMs and the
 * pod's is known. A miss carries the 429 to answer, its Retry-After the predicted drain of
 * the TTFT (at least a second). The one judgement the edge, the scorer and the
 * discrete-event benchmark all make.
 */
export function judgeObjective(
  level: ServiceLevel,
  requestedMs: number | undefined,
  predicted: LocalPrediction | null,
): ObjectiveVerdict {
  const objective = ttftObjective(level, requestedMs)
  if (predicted === null) return { kind: 'unknown', objective }
  const slowTokens =
    level.tpotMs !== undefined && predicted.tpotMs !== null && predicted.tpotMs > level.tpotMs
  if (predicted.ttftMs <= objective.ttftMs && !slowTokens)
    return { kind: 'met', objective, predicted }
  const which = slowTokens
    ? `its time-per-output-token objective of ${level.tpotMs} ms`
    : `its time-to-first-token objective of ${objective.ttftMs} ms`
  const shed: SloShed = {
    status: 429,
    code: 'slo_unattainable',
    message: `No pod can serve this request within ${which} now; retry later.`,
    retryAfterSeconds: drainSeconds(predicted.ttftMs, objective.ttftMs),
  }
  return { kind: 'missed', objective, predicted, shed }
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
  const best = bestLocalPrediction(outcome.attempts, poolStatus)
  const verdict = judgeObjective(level, requestedMs, best)
  const { objective } = verdict
  const goal = `TTFT objective ${objective.ttftMs} ms (${objective.from})`
  const note = (text: string) => ({
    ...outcome,
    reason: `${outcome.reason}; serviceLevel: ${text}`,
  })
  if (verdict.kind === 'unknown') return note(`${goal}, no local prediction: served as decided`)
  const predictedText = predictionText(verdict.predicted)
  if (verdict.kind === 'met') return note(`${goal} met (best local predicted ${predictedText})`)
  const missed = `${goal} missed (best local predicted ${predictedText})`
  const { shed } = verdict
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

function predictionText({ ttftMs, tpotMs }: LocalPrediction): string {
  return tpotMs === null ? `${ttftMs} ms` : `${ttftMs} ms, ${Math.round(tpotMs)} ms per token`
}
