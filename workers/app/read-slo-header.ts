import { maxTtftObjectiveMs, sloTtftHeader } from '../../shared/crd/service-level.ts'
import { invalidRequest } from './read-edge-request.ts'

/** A whole number of milliseconds as a client writes one: digits, no sign, point or exponent. */
const wholeMs = /^[1-9]\d{0,6}$/

/**
 * The client's TTFT objective from its x-kinference-slo-ttft-ms header; undefined when it
 * sent none. A value that is not a whole number of milliseconds from 1 to the largest
 * objective is refused with 400 whatever the policy, since the rule that would read it is
 * known only once the scorer has decided; whether a well-formed value counts is the rule's
 * serviceLevel.allowHeader (shared/policy/service-level.ts), which ignores it otherwise.
 */
export function readSloHeader(value: string | null): number | undefined {
  if (value === null) return undefined
  const ms = wholeMs.test(value) ? Number(value) : Number.NaN
  if (!(ms <= maxTtftObjectiveMs))
    throw invalidRequest(
      `${sloTtftHeader}: "${value.slice(0, 32)}" is not a whole number of milliseconds from 1 to ${maxTtftObjectiveMs}`,
      sloTtftHeader,
    )
  return ms
}
