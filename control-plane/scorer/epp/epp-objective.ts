import {
  maxTpotObjectiveMs,
  maxTtftObjectiveMs,
  ServiceLevel,
  sloTtftHeader,
} from '../../../shared/crd/service-level.ts'
import { judgeObjective } from '../../../shared/policy/apply-service-level.ts'
import type { SloShed } from '../../../shared/policy/choose-targets.ts'
import { readObjectiveHeader } from '../../../shared/policy/read-objective-header.ts'
import type { PoolPrediction } from '../../../shared/routing/pool-router.ts'

/** The TTFT objective's headers: Kinference's own, then the one llm-d's gateways pass. */
const ttftHeaders = [sloTtftHeader, 'x-llm-d-slo-ttft-ms']
/** llm-d's time-per-output-token objective header. */
const tpotHeader = 'x-llm-d-slo-tpot-ms'

/**
 * A request through a gateway has no policy rule: its own objective headers are its
 * service level, shed when missed (a gateway's EPP answers 429 to drop). Judged as the
 * edge's rules are (judgeObjective) on the pool's prediction for its best pod, held wait
 * included; null: no objective, or it is met or cannot be judged. A malformed header is a
 * 400 (KinfError).
 */
export function shedByObjective(
  headers: Readonly<Record<string, string>>,
  prediction: PoolPrediction | null,
): SloShed | null {
  const ttftMs = ttftHeaders
    .map((name) => readObjectiveHeader(name, headers[name], maxTtftObjectiveMs))
    .find((ms) => ms !== undefined)
  const tpotMs = readObjectiveHeader(tpotHeader, headers[tpotHeader], maxTpotObjectiveMs)
  if (ttftMs === undefined && tpotMs === undefined) return null
  const level = ServiceLevel.parse({
    ttftMs: ttftMs ?? maxTtftObjectiveMs,
    minTtftMs: 1,
    ...(tpotMs !== undefined ? { tpotMs } : {}),
    whenUnattainable: 'Shed',
  })
  const verdict = judgeObjective(level, undefined, prediction)
  return verdict.kind === 'missed' ? verdict.shed : null
}
