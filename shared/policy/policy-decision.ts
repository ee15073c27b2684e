import { z } from 'zod'
import { Locality } from '../crd/gateway-backend.ts'

/** What the scorer reports for one pool, for this prompt. */
export const PoolStatus = z.strictObject({
  /** 0 idle .. 1 saturated (may exceed 1). */
  saturation: z.number().min(0),
  saturated: z.boolean(),
  /** Best pod, for this prompt; null when unknown. */
  predictedTtftMs: z.number().min(0).nullable(),
  /** The same pod's predicted time per output token; null or absent when unknown. */
  predictedTpotMs: z.number().min(0).nullable().optional(),
})
export type PoolStatus = z.infer<typeof PoolStatus>

export interface PolicyRequest {
  /** Already authenticated. */
  tenant: string
  /** As requested. */
  model: string
  promptTokens: number
  /** Detectors plus the client's header. */
  labels: readonly string[]
  /** Fail closed: the request counts as carrying every constrained label. */
  detectorFailed: boolean
  /**
   * The client's TTFT objective (its x-kinference-slo-ttft-ms header, already checked to be
   * a whole number of ms); counts only where the rule's serviceLevel allows the header.
   */
  sloTtftMs?: number
}

export interface PolicyInput {
  request: PolicyRequest
  /** Pool id `namespace/name` -> live status; undefined = unknown (scorer not asked or unreachable). */
  poolStatus: (poolId: string) => PoolStatus | undefined
}

export const UpstreamTarget = z.strictObject({
  /** GatewayBackend id `namespace/name`. */
  backend: z.string(),
  locality: Locality,
  /** InferencePool id, for InCluster. */
  pool: z.string().optional(),
  /** InferenceProvider id, for External. */
  provider: z.string().optional(),
  /** The model name on that pool or provider. */
  model: z.string(),
})
export type UpstreamTarget = z.infer<typeof UpstreamTarget>

export const TraceStep = z.strictObject({
  rule: z.string(),
  outcome: z.enum(['matched', 'skipped', 'rewrote', 'constraint']),
  why: z.string(),
})
export type TraceStep = z.infer<typeof TraceStep>

/**
 * What policy decided for a request. A schema, not only a type: the scorer decides for
 * status-dependent policies and the edge reads its answer.
 */
export const PolicyDecision = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('serve'),
    policy: z.string(),
    rule: z.string(),
    /** After aliases. */
    model: z.string(),
    /** In order; a later one is tried when an earlier local one answers saturated or is unreachable. */
    attempts: z.array(UpstreamTarget),
    reason: z.string(),
    trace: z.array(TraceStep),
  }),
  z.strictObject({
    kind: z.literal('reject'),
    policy: z.string().nullable(),
    rule: z.string().nullable(),
    /** An error status (a rule's reject is 400-599): a decision read from the scorer is checked. */
    status: z.int().min(400).max(599),
    code: z.string(),
    message: z.string(),
    /** With a 429 or 503 the policy can time (a shed request's predicted drain): Retry-After. */
    retryAfterSeconds: z.int().min(1).optional(),
    trace: z.array(TraceStep),
  }),
  z.strictObject({
    kind: z.literal('defer'),
    policy: z.string(),
    rule: z.string(),
    retryAfterSeconds: z.number(),
    maxWaitMs: z.number(),
    pools: z.array(z.string()),
    maxSaturation: z.number(),
    trace: z.array(TraceStep),
  }),
])
export type PolicyDecision = z.infer<typeof PolicyDecision>
