import type { LocalityConstraint } from '../crd/inference-policy.ts'
import { coversLabel } from './apply-constraints.ts'

export interface LocalityRefusal {
  /** 503 when waiting can help (the cluster's backends are busy), 400 when it cannot. */
  status: 400 | 503
  message: string
  /** With a 503: when to try again. */
  retryAfterSeconds?: number
}

export interface LocalityRefusalInput {
  constraint: LocalityConstraint
  model: string
  labels: readonly string[]
  detectorFailed: boolean
  /** What the PII scan could not read (an image, binary data), when that is the reason. */
  unreadable?: string | null
  /**
   * Why the in-cluster backends that could serve the request cannot take it now (the pool
   * saturated, the scorer unreachable); null when none could serve it at all.
   */
  busy: string | null
}

/** Seconds a client is told to wait when the cluster's backends are busy. */
const busyRetrySeconds = 5

/**
 * The answer to a request a locality constraint keeps in the cluster when no backend there
 * takes it: it names the constraint and why it applies, and says whether retrying can help.
 * A model served only outside the cluster can never take it (400: the client must change
 * the request); a busy pool may later (503 with Retry-After). The constraint's own message,
 * when it has one, follows. Labels are named; the content that earned them never is.
 */
export function localityRefusal(input: LocalityRefusalInput): LocalityRefusal {
  const { constraint, model, busy } = input
  const because = `constraint ${constraint.name} keeps this request in the cluster because ${reasonOf(input)}`
  const own = constraint.message ? ` ${constraint.message}` : ''
  if (busy === null)
    return {
      status: 400,
      message: `${capitalised(because)}, and model ${model} is not served in the cluster, so retrying will not help: leave that content out, or use a model served in the cluster.${own}`,
    }
  return {
    status: 503,
    message: `${capitalised(because)}, and no backend in the cluster can take it now (${busy}); retry in ${busyRetrySeconds} s.${own}`,
    retryAfterSeconds: busyRetrySeconds,
  }
}

function reasonOf(input: LocalityRefusalInput): string {
  if (input.unreadable)
    return `it carries content the personal-data scan cannot read (${input.unreadable})`
  // With a failed scan the policy engine adds every constrained label: that is not "carried".
  if (input.detectorFailed) return 'the personal-data scan could not read all of it'
  const found = input.labels.filter((label) =>
    input.constraint.labels.some((constrained) => coversLabel(constrained, label)),
  )
  const carried = found.length > 0 ? found : input.constraint.labels
  const personal = carried.every((label) => coversLabel('pii', label))
  return `it carries ${personal ? 'personal data' : 'restricted content'} (${carried.join(', ')})`
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
