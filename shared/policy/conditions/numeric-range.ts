import type { Range } from '../../crd/policy-match.ts'
import type { ConditionResult } from './policy-condition.ts'

/** A value against an inclusive range, either end open: the reason either way. */
export function matchRange(what: string, value: number, range: Range): ConditionResult {
  if (range.min !== undefined && value < range.min) {
    return { holds: false, why: `${what} ${value} < min ${range.min}` }
  }
  if (range.max !== undefined && value > range.max) {
    return { holds: false, why: `${what} ${value} > max ${range.max}` }
  }
  return { holds: true, why: [insideRange(what, value, range)] }
}

function insideRange(what: string, value: number, range: Range): string {
  if (range.min !== undefined && range.max !== undefined) {
    return `${what} ${value} within [${range.min}, ${range.max}]`
  }
  if (range.min !== undefined) return `${what} ${value} >= min ${range.min}`
  if (range.max !== undefined) return `${what} ${value} <= max ${range.max}`
  return `${what} ${value} (no bounds)`
}

/** An open end covers only an open end's values when the later range gives that end too. */
export function rangeCovers(earlier: Range, later: Range | undefined): boolean {
  const lowOk = earlier.min === undefined || (later?.min !== undefined && later.min >= earlier.min)
  const highOk = earlier.max === undefined || (later?.max !== undefined && later.max <= earlier.max)
  return lowOk && highOk
}
