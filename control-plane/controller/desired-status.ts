import { canonicalJson } from '../../shared/config/canonical-json.ts'
import type { Verdict } from '../../shared/config/compile-live-config.ts'
import type { Condition } from '../../shared/crd/condition.ts'

/** Where the config that carries a resource stands. */
export type PublishState =
  /** For one resource, `version` is the snapshot its carried content went live in. */
  | { state: 'published'; version: number; hash: string }
  | { state: 'failed'; message: string; version: number | null }
  | { state: 'pending' }

/** Everything the controller knows of one resource, from which its status follows. */
export interface ResourceFacts {
  kind: string
  generation: number
  verdict: Verdict | undefined
  /** The generation the config carries (current, or the last accepted). */
  carriedGeneration: number | null
  /** Pools and worker sets: pods selected and ready endpoints. */
  counts?: { pods: number; ready: number }
  /** Pools: pods other pools claim first, an upstream pool not taken in, and the like. */
  selectorProblem?: { reason: 'OverlappingSelector' | 'UpstreamPoolNotFound'; message: string }
  publish: PublishState
}

type ConditionSpec = Pick<Condition, 'type' | 'status' | 'reason' | 'message'>

const maxMessage = 32_768

/**
 * The status a resource should have: metav1.Conditions Accepted, ResolvedRefs, Ready
 * (pools and worker sets) and Published, each with the generation it was computed from.
 * lastTransitionTime changes only when a condition's status flips, so equal facts give
 * an equal status and nothing is written.
 */
export function desiredStatus(
  facts: ResourceFacts,
  existing: unknown,
  nowIso: string,
): Record<string, unknown> {
  const before = existingConditions(existing)
  const conditions = conditionsOf(facts).map((spec): Condition => {
    const previous = before.get(spec.type)
    return {
      ...spec,
      message: spec.message.slice(0, maxMessage),
      observedGeneration: facts.generation,
      lastTransitionTime:
        previous &&
        previous.status === spec.status &&
        typeof previous.lastTransitionTime === 'string'
          ? previous.lastTransitionTime
          : nowIso,
    }
  })
  // Conditions of other types (another controller's) are kept as they are.
  const foreign = [...before.values()].filter((c) => !conditions.some((own) => own.type === c.type))
  return {
    ...(typeof existing === 'object' && existing !== null ? (existing as object) : {}),
    observedGeneration: facts.generation,
    conditions: [...conditions, ...foreign],
    ...(facts.counts && facts.kind === 'InferencePool' && { pods: facts.counts.pods }),
    ...(facts.counts && { readyPods: facts.counts.ready }),
  }
}

/** Whether writing `desired` would change anything. */
export function statusDiffers(existing: unknown, desired: Record<string, unknown>): boolean {
  return canonicalJson(existing ?? {}) !== canonicalJson(desired)
}

function existingConditions(existing: unknown): Map<string, Record<string, unknown>> {
  const list = (existing as { conditions?: unknown } | null)?.conditions
  const map = new Map<string, Record<string, unknown>>()
  if (!Array.isArray(list)) return map
  for (const item of list)
    if (typeof item === 'object' && item !== null && typeof item.type === 'string')
      map.set(item.type, item)
  return map
}

function conditionsOf(facts: ResourceFacts): ConditionSpec[] {
  const list = [accepted(facts), resolvedRefs(facts)]
  if (facts.counts) list.push(ready(facts))
  list.push(published(facts))
  return list
}

function accepted({ verdict, carriedGeneration }: ResourceFacts): ConditionSpec {
  if (!verdict) return { type: 'Accepted', status: 'Unknown', reason: 'Pending', message: '' }
  if (verdict.accepted) return { type: 'Accepted', status: 'True', reason: 'Accepted', message: '' }
  const kept =
    verdict.carried === 'previous'
      ? ` (generation ${carriedGeneration ?? '?'}, the last accepted, stays live)`
      : ' (left out of the config)'
  return {
    type: 'Accepted',
    status: 'False',
    reason:
      verdict.resolvedRefs === 'Unknown'
        ? 'Invalid'
        : verdict.resolvedRefs === 'False'
          ? 'InvalidRefs'
          : 'Conflict',
    message: `${verdict.problems.join('; ')}${kept}`,
  }
}

function resolvedRefs({ verdict, selectorProblem }: ResourceFacts): ConditionSpec {
  if (!verdict || verdict.resolvedRefs === 'Unknown')
    return {
      type: 'ResolvedRefs',
      status: 'Unknown',
      reason: 'Pending',
      message: verdict ? 'the spec does not validate' : '',
    }
  if (verdict.resolvedRefs === 'False') {
    const missing = verdict.problems.filter((p) => p.includes('not found'))
    return {
      type: 'ResolvedRefs',
      status: 'False',
      reason: 'RefNotFound',
      message: missing.join('; '),
    }
  }
  if (selectorProblem)
    return {
      type: 'ResolvedRefs',
      status: 'False',
      reason: selectorProblem.reason,
      message: selectorProblem.message,
    }
  return { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: '' }
}

function ready({ counts, verdict }: ResourceFacts): ConditionSpec {
  const { pods, ready: readyCount } = counts ?? { pods: 0, ready: 0 }
  if (verdict?.carried === 'none')
    return { type: 'Ready', status: 'False', reason: 'NotAccepted', message: 'not in the config' }
  const message = `${readyCount} of ${pods} selected pod${pods === 1 ? '' : 's'} ready`
  return readyCount > 0
    ? { type: 'Ready', status: 'True', reason: 'EndpointsReady', message }
    : { type: 'Ready', status: 'False', reason: 'NoReadyEndpoints', message }
}

function published({ publish, verdict, carriedGeneration }: ResourceFacts): ConditionSpec {
  if (verdict?.carried === 'none')
    return {
      type: 'Published',
      status: 'False',
      reason: 'NotPublished',
      message: 'no accepted generation to publish',
    }
  if (publish.state === 'pending')
    return { type: 'Published', status: 'Unknown', reason: 'Pending', message: '' }
  if (publish.state === 'failed') {
    const live =
      publish.version === null
        ? 'no snapshot is live yet'
        : `snapshot version ${publish.version} stays live`
    return {
      type: 'Published',
      status: 'False',
      reason: 'PublishFailed',
      message: `${publish.message}; ${live}`,
    }
  }
  return {
    type: 'Published',
    status: 'True',
    reason: 'Published',
    // The version this resource's content went live in, not the newest one: a new
    // snapshot must not rewrite every resource's status (a write storm per change).
    message: `generation ${carriedGeneration ?? '?'} live since snapshot version ${publish.version}`,
  }
}
