import type { Range, RuleMatch } from '../crd/policy-match.ts'

/**
 * True when every request matching `later` also matches `earlier`, so a terminal
 * `earlier` rule makes `later` unreachable. Sound but not complete: when in doubt it
 * answers false, because calling a reachable rule dead is worse than missing a dead one.
 */
export function ruleCovers(earlier: RuleMatch, later: RuleMatch): boolean {
  return (
    listCovers(earlier.tenants, later.tenants) &&
    listCovers(earlier.models, later.models) &&
    rangeCovers(earlier.promptTokens, later.promptTokens) &&
    labelsCover(earlier.labels, later.labels) &&
    poolCovers(earlier.pool, later.pool)
  )
}

/** An omitted list matches everything; a given one matches only its members. */
function listCovers(earlier?: readonly string[], later?: readonly string[]): boolean {
  if (earlier === undefined) return true
  return later?.every((value) => earlier.includes(value)) === true
}

function rangeCovers(earlier?: Range, later?: Range): boolean {
  if (earlier === undefined) return true
  const lowOk = earlier.min === undefined || (later?.min !== undefined && later.min >= earlier.min)
  const highOk = earlier.max === undefined || (later?.max !== undefined && later.max <= earlier.max)
  return lowOk && highOk
}

function labelsCover(earlier?: RuleMatch['labels'], later?: RuleMatch['labels']): boolean {
  if (earlier === undefined) return true
  const laterAll = later?.all ?? []
  const laterNone = later?.none ?? []
  const allOk = (earlier.all ?? []).every((label) => laterAll.includes(label))
  const noneOk = (earlier.none ?? []).every((label) => laterNone.includes(label))
  const anyOk =
    earlier.any === undefined ||
    earlier.any.some((label) => laterAll.includes(label)) ||
    later?.any?.every((label) => earlier.any?.includes(label)) === true
  return allOk && noneOk && anyOk
}

/** Live pool status changes; only an identical condition is known to cover. */
function poolCovers(earlier?: RuleMatch['pool'], later?: RuleMatch['pool']): boolean {
  if (earlier === undefined) return true
  return later !== undefined && JSON.stringify(earlier) === JSON.stringify(later)
}

/** True when every request the match admits carries at least one of `labels`. */
export function matchRequiresAnyLabel(match: RuleMatch, labels: readonly string[]): boolean {
  const all = match.labels?.all ?? []
  const any = match.labels?.any
  return (
    all.some((label) => labels.includes(label)) ||
    any?.every((label) => labels.includes(label)) === true
  )
}
