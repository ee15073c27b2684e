import { z } from 'zod'
import { RequestLabel } from '../../crd/policy-match.ts'
import { type ConditionResult, requestCondition } from './policy-condition.ts'

const labelList = z.array(RequestLabel).min(1).max(32)

export const LabelMatch = z
  .strictObject({
    all: labelList.optional().describe('The request carries every one of these labels.'),
    any: labelList.optional().describe('The request carries at least one of these labels.'),
    none: labelList.optional().describe('The request carries none of these labels.'),
  })
  .describe(
    'Labels come from the PII detectors (pii, pii:card, ...) and the client’s labels header.',
  )
export type LabelMatch = z.infer<typeof LabelMatch>

/** `match.labels`: the request's labels, after fail-closed widening, meet all, any and none. */
export const labelsCondition = requestCondition({
  key: 'labels',
  schema: LabelMatch.optional(),
  match: (labels, subject) => matchLabels(labels, subject.labels),
  covers: labelsCover,
})

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

function labelsCover(earlier: LabelMatch, later: LabelMatch | undefined): boolean {
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

/** True when every request a rule's labels condition admits carries at least one of `labels`. */
export function labelsRequireAny(
  match: LabelMatch | undefined,
  labels: readonly string[],
): boolean {
  const all = match?.all ?? []
  const any = match?.any
  return (
    all.some((label) => labels.includes(label)) ||
    any?.every((label) => labels.includes(label)) === true
  )
}
