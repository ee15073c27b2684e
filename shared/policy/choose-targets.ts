import type { ConfigSnapshot } from '../config/config-snapshot.ts'
import type { RuleAction } from '../crd/policy-action.ts'
import { KinfError } from '../errors/kinf-error.ts'
import type { PoolStatus, UpstreamTarget } from './policy-decision.ts'
import { resolveBackend } from './resolve-backend.ts'

/** A backend an action may use, with what choosing among them needs. */
interface Candidate {
  target: UpstreamTarget
  relativeCost: number
  /** Undefined for providers and for pools the scorer did not report. */
  status: PoolStatus | undefined
}

/** The refusal of a request no pod can start within its objective now (apply-service-level.ts). */
export interface SloShed {
  status: 429
  code: 'slo_unattainable'
  message: string
  retryAfterSeconds: number
}

/** What a terminal action decides, before locality constraints. */
export type ActionOutcome =
  | {
      kind: 'serve'
      attempts: UpstreamTarget[]
      reason: string
      /** Answered instead when locality constraints leave no external attempt (BurstOrShed). */
      shedIfHeldLocal?: SloShed
    }
  | {
      kind: 'reject'
      status: number
      code: string
      message: string
      reason: string
      /** With a 429 or 503: when to try again. */
      retryAfterSeconds?: number
    }
  | {
      kind: 'defer'
      /** Where the work would run once admitted; constraints are checked on these. */
      attempts: UpstreamTarget[]
      pools: string[]
      maxSaturation: number
      maxWaitMs: number
      retryAfterSeconds: number
      reason: string
    }

type StatusOf = (poolId: string) => PoolStatus | undefined

/** Applies a terminal action: which backends, in which order, or a rejection or deferral. */
export function chooseTargets(
  action: RuleAction,
  snapshot: ConfigSnapshot,
  namespace: string,
  poolStatus: StatusOf,
): ActionOutcome {
  const resolve = (names: readonly string[]): Candidate[] =>
    names.map((name) => {
      const { target, relativeCost } = resolveBackend(snapshot, namespace, name)
      const status = target.pool === undefined ? undefined : poolStatus(target.pool)
      return { target, relativeCost, status }
    })
  if (action.route) {
    const ranked = rankByTtft(resolve(action.route.backends))
    const fallback = resolve(action.route.fallback ?? [])
    const tail = fallback.length > 0 ? `, then fallback ${fallback.map(name).join(', ')}` : ''
    return {
      kind: 'serve',
      attempts: targets([...ranked, ...fallback]),
      reason:
        ranked.length === 1
          ? `route: ${name(ranked[0] as Candidate)}${tail}`
          : `route: ${ranked.map(describe).join(', ')}, fastest predicted first${tail}`,
    }
  }
  if (action.burst) {
    const { whenSaturationAbove, whenPredictedTtftAboveMs } = action.burst
    const local = rankByTtft(resolve(action.burst.local))
    const external = resolve(action.burst.external)
    const why = burstTrigger(local, whenSaturationAbove, whenPredictedTtftAboveMs)
    if (why.burst) {
      return {
        kind: 'serve',
        attempts: targets([...external, ...local]),
        reason: `burst: ${why.text}: external first (${external.map(name).join(', ')}), local as a last resort`,
      }
    }
    return {
      kind: 'serve',
      attempts: targets([...local, ...external]),
      reason: `burst: ${why.text}: local first (${local.map(name).join(', ')}), then external (${external.map(name).join(', ')}) if local answers saturated or is unreachable`,
    }
  }
  if (action.preferCheaper)
    return preferCheaper(
      resolve(action.preferCheaper.backends),
      action.preferCheaper.ttftAdvantageMs,
    )
  if (action.deferUntilIdle) {
    const { maxSaturation, maxWaitMs, retryAfterSeconds } = action.deferUntilIdle
    const candidates = rankByTtft(resolve(action.deferUntilIdle.backends))
    const pools = [...new Set(candidates.flatMap((c) => (c.target.pool ? [c.target.pool] : [])))]
    const busy = pools.flatMap((pool) => {
      const status = poolStatus(pool)
      if (status === undefined) return [`pool ${pool} status unknown`]
      if (status.saturated) return [`pool ${pool} saturated`]
      if (status.saturation > maxSaturation) {
        return [`pool ${pool} saturation ${status.saturation} > ${maxSaturation}`]
      }
      return []
    })
    if (busy.length === 0) {
      const idle = pools.map(
        (pool) => `pool ${pool} saturation ${poolStatus(pool)?.saturation} <= ${maxSaturation}`,
      )
      return {
        kind: 'serve',
        attempts: targets(candidates),
        reason: `deferUntilIdle: ${idle.length > 0 ? idle.join(', ') : 'no in-cluster pool to wait for'}: admitted now`,
      }
    }
    return {
      kind: 'defer',
      attempts: targets(candidates),
      pools,
      maxSaturation,
      maxWaitMs,
      retryAfterSeconds,
      reason: `deferUntilIdle: ${busy.join(', ')}: deferred (wait up to ${maxWaitMs} ms, then 429 with Retry-After ${retryAfterSeconds} s)`,
    }
  }
  if (action.reject) {
    const { status, message } = action.reject
    const code = action.reject.code ?? 'policy_rejected'
    return { kind: 'reject', status, code, message, reason: `reject: ${status} ${code}` }
  }
  // isTerminalAction routes rewriteModel elsewhere; a snapshot only parses with one action.
  throw new KinfError('internal', 'chooseTargets needs a terminal action')
}

function preferCheaper(candidates: Candidate[], advantageMs: number): ActionOutcome {
  const byCost = [...candidates].sort((a, b) => a.relativeCost - b.relativeCost)
  const cheapest = byCost[0] as Candidate
  const cheapTtft = cheapest.status?.predictedTtftMs ?? null
  const notes: string[] = []
  let chosen = cheapest
  let best: number | null = null
  for (const other of byCost.slice(1)) {
    const ttft = other.status?.predictedTtftMs ?? null
    if (cheapTtft === null || ttft === null) {
      notes.push(`${other.target.backend}: predicted TTFT unknown, no comparison`)
      continue
    }
    const advantage = cheapTtft - ttft
    if (advantage > advantageMs && (best === null || ttft < best)) {
      chosen = other
      best = ttft
    }
    notes.push(
      `${other.target.backend} predicted ${advantage} ms faster (${advantage > advantageMs ? '>' : '<='} ${advantageMs} ms)`,
    )
  }
  const cheap = `${cheapest.target.backend} is cheapest (relativeCost ${cheapest.relativeCost}, predicted TTFT ${ttftText(cheapest)})`
  const verdict =
    chosen === cheapest
      ? `chose ${cheapest.target.backend}`
      : `chose ${chosen.target.backend} (relativeCost ${chosen.relativeCost})`
  return {
    kind: 'serve',
    attempts: targets([chosen, ...byCost.filter((c) => c !== chosen)]),
    reason: `preferCheaper: ${cheap}; ${notes.join('; ')}: ${verdict}`,
  }
}

/** Whether burst's thresholds send the request outside first, and why in words. */
function burstTrigger(
  local: Candidate[],
  saturationAbove: number,
  ttftAboveMs: number | undefined,
): { burst: boolean; text: string } {
  const statuses = local.map((c) => c.status)
  const known = statuses.filter((s): s is PoolStatus => s !== undefined)
  const best = Math.min(
    ...known.flatMap((s) => (s.predictedTtftMs === null ? [] : [s.predictedTtftMs])),
  )
  const saturationText = local
    .map((c) =>
      c.status === undefined
        ? `${poolOf(c)} status unknown`
        : `${poolOf(c)} saturation ${c.status.saturation}${c.status.saturated ? ' (saturated)' : ''}`,
    )
    .join(', ')
  // "1 = saturated": a pool the scorer flags saturated counts as at 1 at least.
  const over = (s: PoolStatus) =>
    s.saturation >= saturationAbove || (s.saturated && saturationAbove <= 1)
  if (known.length === local.length && known.length > 0 && known.every(over)) {
    return { burst: true, text: `${saturationText} >= ${saturationAbove}` }
  }
  if (ttftAboveMs !== undefined && Number.isFinite(best) && best > ttftAboveMs) {
    return { burst: true, text: `best local predicted TTFT ${best} ms > ${ttftAboveMs} ms` }
  }
  const ttftText =
    ttftAboveMs === undefined
      ? ''
      : Number.isFinite(best)
        ? `, best local predicted TTFT ${best} ms <= ${ttftAboveMs} ms`
        : ', local predicted TTFT unknown'
  return { burst: false, text: `${saturationText} (burst at ${saturationAbove})${ttftText}` }
}

/** Known predicted TTFT first, fastest first; unknown after; ties keep the listed order. */
function rankByTtft(candidates: Candidate[]): Candidate[] {
  const ttft = (c: Candidate) => c.status?.predictedTtftMs ?? Number.POSITIVE_INFINITY
  return [...candidates].sort((a, b) => {
    const [x, y] = [ttft(a), ttft(b)]
    return x === y ? 0 : x < y ? -1 : 1
  })
}

/** Each backend once, at its first position. */
function targets(candidates: Candidate[]): UpstreamTarget[] {
  const seen = new Set<string>()
  return candidates.flatMap((c) => {
    if (seen.has(c.target.backend)) return []
    seen.add(c.target.backend)
    return [c.target]
  })
}

const name = (c: Candidate) => c.target.backend
const poolOf = (c: Candidate) => `pool ${c.target.pool ?? c.target.provider}`
const ttftText = (c: Candidate) =>
  c.status?.predictedTtftMs == null ? 'unknown' : `${c.status.predictedTtftMs} ms`
const describe = (c: Candidate) =>
  c.target.pool === undefined
    ? c.target.backend
    : `${c.target.backend} (predicted TTFT ${ttftText(c)})`
