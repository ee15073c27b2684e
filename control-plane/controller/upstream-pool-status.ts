import type { KubernetesObject } from '@kubernetes/client-node'
import { canonicalJson } from '../../shared/config/canonical-json.ts'
import type { Verdict } from '../../shared/config/compile-live-config.ts'
import type { ResolvedEndpoints } from '../../shared/config/resolve-endpoints.ts'
import type {
  UpstreamIntake,
  UpstreamPoolOutcome,
} from '../../shared/config/take-in-upstream-pools.ts'
import type { Condition } from '../../shared/crd/condition.ts'
import type { KinferenceResource } from '../../shared/crd/resource.ts'
import type { Log } from '../../shared/logging/log.ts'
import type { ControllerMetrics } from './controller-metrics.ts'
import type { StatusWrite } from './status-writer.ts'
import { upstreamPoolKind } from './watched-kinds.ts'

/** Our controllerName on the upstream pools' status.parents entries. */
export const eppControllerName = 'kinference.dev/endpoint-picker'

/** The most entries GIE's CRD allows in status.parents. */
const maxParents = 32

type ConditionSpec = Pick<Condition, 'type' | 'status' | 'reason' | 'message'>

/** What the controller knows of one upstream pool that names our Endpoint Picker. */
export interface UpstreamFacts {
  outcome: UpstreamPoolOutcome
  /** The upstream pool's metadata.generation. */
  generation: number
  /** The verdict on the Kinference pool serving it (referred or of defaults). */
  verdict: Verdict | undefined
  /** The generation of that Kinference pool the config carries, when not its current. */
  carriedGeneration: number | null
  resolved: ResolvedEndpoints
}

/**
 * Our entry of an upstream pool's status.parents. Its parentRef is the Endpoint Picker
 * Service the pool names (group "", kind Service, in the pool's namespace): the object
 * through which the pool reaches us. A Gateway would be GIE's usual parent, but the EPP
 * does not know which Gateways route to the pool, and the Service keeps our entry apart
 * from every gateway controller's.
 */
export function upstreamParentEntry(
  facts: UpstreamFacts,
  ref: { service: string; namespace: string },
  previous: Record<string, unknown> | undefined,
  nowIso: string,
): Record<string, unknown> {
  const before = new Map(
    (Array.isArray(previous?.conditions) ? previous.conditions : []).map(
      (c: { type?: unknown }) => [c.type, c as Record<string, unknown>],
    ),
  )
  const conditions = [accepted(facts.outcome), resolvedRefs(facts)].map((spec) => {
    const old = before.get(spec.type)
    return {
      ...spec,
      observedGeneration: facts.generation,
      lastTransitionTime:
        old?.status === spec.status && typeof old.lastTransitionTime === 'string'
          ? old.lastTransitionTime
          : nowIso,
    }
  })
  return {
    parentRef: { group: '', kind: 'Service', name: ref.service, namespace: ref.namespace },
    controllerName: eppControllerName,
    conditions,
  }
}

/**
 * The status with our entry of status.parents set to `entry` (null: removed), every other
 * controller's entry left as it is, in its place; null when that changes nothing. Ours is
 * the entry with our controllerName: it keeps its position, a new one goes last.
 */
export function withOurParent(
  existing: unknown,
  entry: ((previous: Record<string, unknown> | undefined) => Record<string, unknown>) | null,
): Record<string, unknown> | null {
  const status = typeof existing === 'object' && existing !== null ? existing : {}
  const parents: unknown[] = Array.isArray((status as { parents?: unknown }).parents)
    ? (status as { parents: unknown[] }).parents
    : []
  const at = parents.findIndex(
    (p) => (p as { controllerName?: unknown } | null)?.controllerName === eppControllerName,
  )
  const next = [...parents]
  if (entry === null) {
    if (at < 0) return null
    next.splice(at, 1)
  } else if (at >= 0) next[at] = entry(parents[at] as Record<string, unknown>)
  else if (parents.length < maxParents) next.push(entry(undefined))
  else return null
  const { parents: _parents, ...rest } = status as Record<string, unknown>
  const desired = next.length > 0 ? { ...rest, parents: next } : rest
  return canonicalJson(desired) === canonicalJson(status) ? null : desired
}

function accepted(outcome: UpstreamPoolOutcome): ConditionSpec {
  if (outcome.served === 'refused')
    return {
      type: 'Accepted',
      status: 'False',
      reason: 'NotSupportedByParent',
      message: outcome.message,
    }
  return {
    type: 'Accepted',
    status: 'True',
    reason: 'Accepted',
    message:
      outcome.served === 'referred'
        ? `served as InferencePool.kinference.dev ${outcome.poolId}`
        : `served with defaults as ${outcome.poolId}: no InferencePool.kinference.dev names it in spec.upstreamPoolRef`,
  }
}

function resolvedRefs(facts: UpstreamFacts): ConditionSpec {
  const invalid = (message: string): ConditionSpec => ({
    type: 'ResolvedRefs',
    status: 'False',
    reason: 'InvalidExtensionRef',
    message,
  })
  const { outcome, verdict, resolved } = facts
  if (outcome.served === 'refused') return invalid(outcome.message)
  const pool = `InferencePool.kinference.dev ${outcome.poolId}`
  if (verdict && !verdict.accepted) {
    const kept =
      verdict.carried === 'previous'
        ? `its generation ${facts.carriedGeneration ?? '?'} stays live`
        : 'it is left out of the config'
    return invalid(`${pool} is not accepted (${verdict.problems.join('; ')}); ${kept}`)
  }
  const issue = resolved.issues.find((i) => i.kind === 'InferencePool' && i.id === outcome.poolId)
  if (issue) return invalid(`${pool}: ${issue.message}`)
  if ((resolved.counts[`InferencePool/${outcome.poolId}`]?.pods ?? 0) === 0)
    return invalid('no pod matches spec.selector')
  return { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: '' }
}

/**
 * Brings our entry on every watched upstream pool up to date: set on those we take in,
 * removed from the others (they stopped naming our Endpoint Picker, or we are off).
 */
export async function writeUpstreamStatuses(options: {
  objects: readonly KubernetesObject[]
  intake: UpstreamIntake
  verdicts: ReadonlyMap<string, Verdict>
  /** The Kinference pool versions the config carries, by key. */
  carried: ReadonlyMap<string, KinferenceResource>
  resolved: ResolvedEndpoints
  service: string | null
  nowIso: string
  write: (
    object: KubernetesObject,
    compute: (existing: unknown) => Record<string, unknown> | null,
  ) => Promise<StatusWrite>
  metrics: ControllerMetrics
  log: Log
}): Promise<void> {
  const { intake, service } = options
  await Promise.all(
    options.objects.map(async (object) => {
      const { name = '', namespace = '', generation = 0 } = object.metadata ?? {}
      const outcome = intake.outcomes.get(`${namespace}/${name}`)
      const facts = (): UpstreamFacts | null => {
        if (!outcome) return null
        const key = outcome.served === 'refused' ? null : outcome.key
        const verdict = key === null ? undefined : options.verdicts.get(key)
        const carried = key === null ? undefined : options.carried.get(key)
        return {
          outcome,
          generation,
          verdict,
          carriedGeneration: carried?.metadata.generation ?? null,
          resolved: options.resolved,
        }
      }
      const known = facts()
      const entry =
        known && service !== null
          ? (previous: Record<string, unknown> | undefined) =>
              upstreamParentEntry(known, { service, namespace }, previous, options.nowIso)
          : null
      const result = await options
        .write(object, (existing) => withOurParent(existing, entry))
        .catch((error: unknown) => {
          const message = (error as Error).message
          options.log(`status of ${upstreamPoolKind.kind} ${namespace}/${name}: ${message}`, {
            level: 'warn',
            kind: upstreamPoolKind.kind,
            namespace,
            name,
            error: message,
          })
          return 'failed' as const
        })
      options.metrics.statusWrites.labels({ kind: upstreamPoolKind.kind, result }).inc()
    }),
  )
}
