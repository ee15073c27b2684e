import type { ConditionResult } from './policy-condition.ts'

/** A list condition holds when the request's value is one of the list's. */
export function matchNameList(
  what: string,
  value: string,
  list: readonly string[],
): ConditionResult {
  return list.includes(value)
    ? { holds: true, why: [`${what} ${value}`] }
    : { holds: false, why: `${what} ${value} not in [${list.join(', ')}]` }
}

/** An omitted later list admits everything; a given one only its members. */
export function nameListCovers(
  earlier: readonly string[],
  later: readonly string[] | undefined,
): boolean {
  return later?.every((value) => earlier.includes(value)) === true
}
