import type { z } from 'zod'
import type { PoolStatus } from '../policy-decision.ts'

/** The request as rules see it: the model after any rewrite, labels after fail-closed widening. */
export interface MatchSubject {
  tenant: string
  model: string
  promptTokens: number
  labels: ReadonlySet<string>
}

/** Whether a condition holds, and why (shown in the decision trace). */
export type ConditionResult = { holds: true; why: string[] } | { holds: false; why: string }

/** The live status a status condition reads: each pool's, by pool id, as the scorer reports it. */
export interface LiveStatus {
  /** The policy's namespace, in which the condition's pool names resolve. */
  namespace: string
  poolStatus: (poolId: string) => PoolStatus | undefined
}

/**
 * A name a condition refers to, which validate checks: a tenant of the rule's own policy,
 * or a resource of that kind in the policy's namespace.
 */
export interface ConditionReference {
  /** Where the name is, below the condition's field (e.g. ['name'] or [2]). */
  path: (string | number)[]
  // Not ResourceKind: that type is built from the policy schema, which is built from conditions.
  kind: 'Tenant' | 'InferencePool' | 'InferenceWorkerSet' | 'InferenceProvider' | 'GatewayBackend'
  name: string
}

/**
 * A condition's field in a rule's match: optional, since an absent condition admits every
 * request. Its descriptions and defaults are the CRD's, so they are written here.
 */
export type ConditionSchema = z.ZodOptional<z.ZodType>

/** The parsed value of a condition that is present in a rule. */
export type ConditionValue<Schema extends ConditionSchema> = Exclude<z.output<Schema>, undefined>

interface ConditionBase<Key extends string, Schema extends ConditionSchema> {
  /** The field's name under a rule's `match`. */
  readonly key: Key
  readonly schema: Schema
  /**
   * True when every request a rule with condition `later` (undefined: the rule has no such
   * condition) admits is also admitted by `earlier`. validate calls a rule unreachable
   * only when every condition of an earlier terminal rule covers the later rule's, so
   * this must be sound: when in doubt answer false, because calling a reachable rule dead
   * is worse than missing a dead one. Required, so a condition cannot be added without it.
   */
  covers(earlier: ConditionValue<Schema>, later: ConditionValue<Schema> | undefined): boolean
  /** The names the condition refers to, checked by validate; none when omitted. */
  references?(value: ConditionValue<Schema>): ConditionReference[]
}

/** A condition on the request alone, tested before any pool status is known. */
export interface RequestCondition<
  Key extends string = string,
  Schema extends ConditionSchema = ConditionSchema,
> extends ConditionBase<Key, Schema> {
  readonly reads: 'request'
  match(value: ConditionValue<Schema>, subject: MatchSubject): ConditionResult
}

/**
 * A condition on live pool status, tested after the request conditions hold. Its rule may
 * or may not fire depending on that status, which the scorer is asked for beforehand.
 */
export interface StatusCondition<
  Key extends string = string,
  Schema extends ConditionSchema = ConditionSchema,
> extends ConditionBase<Key, Schema> {
  readonly reads: 'poolStatus'
  /** The ids of the pools whose status the condition reads. */
  pools(value: ConditionValue<Schema>, namespace: string): string[]
  match(value: ConditionValue<Schema>, live: LiveStatus): ConditionResult
}

export type PolicyCondition<
  Key extends string = string,
  Schema extends ConditionSchema = ConditionSchema,
> = RequestCondition<Key, Schema> | StatusCondition<Key, Schema>

/**
 * The conditions a rule's match may hold, in the order they are tested and appear in the
 * CRD. A value, passed to whatever builds the policy schema, matches or validates.
 */
export type ConditionRegistry = readonly PolicyCondition[]

/** Declares a request condition; the types of `match` and `covers` follow from `schema`. */
export function requestCondition<const Key extends string, Schema extends ConditionSchema>(
  condition: Omit<RequestCondition<Key, Schema>, 'reads'>,
): RequestCondition<Key, Schema> {
  return { ...condition, reads: 'request' }
}

/** Declares a status condition; the types of its members follow from `schema`. */
export function statusCondition<const Key extends string, Schema extends ConditionSchema>(
  condition: Omit<StatusCondition<Key, Schema>, 'reads'>,
): StatusCondition<Key, Schema> {
  return { ...condition, reads: 'poolStatus' }
}
