import type { LabelMatch, PoolStatusMatch, Range, RuleMatch } from '../crd/policy-match.ts'
import type { PoolStatus } from './policy-decision.ts'
import { policyPoolId } from './resolve-backend.ts'

/** The request as rules see it: the model after any rewrite, labels after fail-closed widening. */
export interface MatchSubject {
  tenant: string
  model: string
  promptTokens: number
  labels: ReadonlySet<string>
}

export type ConditionResult = { holds: true; why: string[] } | { holds: false; why: string }

/**
 * The conditions that depend on the request only (tenants, models, prompt length,
 * labels), so poolsToAsk can test them before any pool status is known.
 */
export function matchRequestConditions(match: RuleMatch, subject: MatchSubject): ConditionResult {
  const why: string[] = []
  if (match.tenants !== undefined) {
    if (!match.tenants.includes(subject.tenant)) {
      return { holds: false, why: `tenant ${subject.tenant} not in [${match.tenants.join(', ')}]` }
    }
    why.push(`tenant ${subject.tenant}`)
  }
  if (match.models !== undefined) {
    if (!match.models.includes(subject.model)) {
      return { holds: false, why: `model ${subject.model} not in [${match.models.join(', ')}]` }
    }
    why.push(`model ${subject.model}`)
  }
  if (match.promptTokens !== undefined) {
    const failed = outsideRange('promptTokens', subject.promptTokens, match.promptTokens)
    if (failed !== null) return { holds: false, why: failed }
    why.push(insideRange('promptTokens', subject.promptTokens, match.promptTokens))
  }
  if (match.labels !== undefined) {
    const result = matchLabels(match.labels, subject.labels)
    if (!result.holds) return result
    why.push(...result.why)
  }
  return { holds: true, why }
}

/** The rule's pool condition against the live status; unknown status never holds. */
export function matchPoolCondition(
  pool: PoolStatusMatch,
  namespace: string,
  status: PoolStatus | undefined,
): ConditionResult {
  const id = policyPoolId(namespace, pool.name)
  if (status === undefined) return { holds: false, why: `pool ${id} status unknown` }
  const why: string[] = []
  if (pool.saturated !== undefined) {
    if (status.saturated !== pool.saturated) {
      return {
        holds: false,
        why: `pool ${id} is ${status.saturated ? '' : 'not '}saturated (rule wants saturated: ${pool.saturated})`,
      }
    }
    why.push(`pool ${id} ${status.saturated ? '' : 'not '}saturated`)
  }
  if (pool.saturation !== undefined) {
    const failed = outsideRange(`pool ${id} saturation`, status.saturation, pool.saturation)
    if (failed !== null) return { holds: false, why: failed }
    why.push(insideRange(`pool ${id} saturation`, status.saturation, pool.saturation))
  }
  if (pool.predictedTtftMs !== undefined) {
    const ttft = status.predictedTtftMs
    if (ttft === null) return { holds: false, why: `pool ${id} predicted TTFT unknown` }
    const failed = outsideRange(`pool ${id} predictedTtftMs`, ttft, pool.predictedTtftMs)
    if (failed !== null) return { holds: false, why: failed }
    why.push(insideRange(`pool ${id} predictedTtftMs`, ttft, pool.predictedTtftMs))
  }
  if (why.length === 0) why.push(`pool ${id} status known`)
  return { holds: true, why }
}

/** Every given condition of the rule, request conditions first. */
export function matchRule(
  match: RuleMatch,
  namespace: string,
  subject: MatchSubject,
  poolStatus: (poolId: string) => PoolStatus | undefined,
): ConditionResult {
  const request = matchRequestConditions(match, subject)
  if (!request.holds || match.pool === undefined) return request
  const pool = matchPoolCondition(
    match.pool,
    namespace,
    poolStatus(policyPoolId(namespace, match.pool.name)),
  )
  return pool.holds ? { holds: true, why: [...request.why, ...pool.why] } : pool
}

function matchLabels(labels: LabelMatch, carried: ReadonlySet<string>): ConditionResult {
  const why: string[] = []
  if (labels.all !== undefined) {
    const missing = labels.all.filter((label) => !carried.has(label))
    if (missing.length > 0) {
      return {
        holds: false,
        why: `labels: ${missing.join(', ')} missing (all of [${labels.all.join(', ')}] required)`,
      }
    }
    why.push(`labels: all of [${labels.all.join(', ')}] present`)
  }
  if (labels.any !== undefined) {
    const present = labels.any.filter((label) => carried.has(label))
    if (present.length === 0) {
      return { holds: false, why: `labels: none of [${labels.any.join(', ')}] present` }
    }
    why.push(`labels: ${present.join(', ')} present`)
  }
  if (labels.none !== undefined) {
    const present = labels.none.filter((label) => carried.has(label))
    if (present.length > 0) {
      return {
        holds: false,
        why: `labels: ${present.join(', ')} present (none of [${labels.none.join(', ')}] allowed)`,
      }
    }
    why.push(`labels: none of [${labels.none.join(', ')}] present`)
  }
  return { holds: true, why }
}

function outsideRange(what: string, value: number, range: Range): string | null {
  if (range.min !== undefined && value < range.min) return `${what} ${value} < min ${range.min}`
  if (range.max !== undefined && value > range.max) return `${what} ${value} > max ${range.max}`
  return null
}

function insideRange(what: string, value: number, range: Range): string {
  if (range.min !== undefined && range.max !== undefined) {
    return `${what} ${value} within [${range.min}, ${range.max}]`
  }
  if (range.min !== undefined) return `${what} ${value} >= min ${range.min}`
  if (range.max !== undefined) return `${what} ${value} <= max ${range.max}`
  return `${what} ${value} (no bounds)`
}
