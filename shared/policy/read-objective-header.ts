import { KinfError } from '../errors/kinf-error.ts'

/** A whole number of milliseconds as a client writes one: digits, no sign, point or exponent. */
const wholeMs = /^[1-9]\d{0,6}$/

/**
 * A latency objective a request names in header `name` (the edge's
 * x-kinference-slo-ttft-ms; the llm-d-style x-llm-d-slo-ttft-ms a gateway passes to the
 * Endpoint Picker); undefined when absent. A value that is not a whole number of
 * milliseconds from 1 to `maxMs` is refused with 400 whatever the policy, since the rule
 * that would read it is known only once the scorer has decided; whether a well-formed value
 * counts is the rule's serviceLevel.allowHeader, which ignores it otherwise.
 */
export function readObjectiveHeader(
  name: string,
  value: string | null | undefined,
  maxMs: number,
): number | undefined {
  if (value === null || value === undefined) return undefined
  const ms = wholeMs.test(value) ? Number(value) : Number.NaN
  if (!(ms <= maxMs))
    throw new KinfError(
      'invalid_request',
      `${name}: "${value.slice(0, 32)}" is not a whole number of milliseconds from 1 to ${maxMs}`,
      { param: name },
    )
  return ms
}
