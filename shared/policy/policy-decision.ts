import type { Locality } from '../crd/gateway-backend.ts'

/** What the scorer reports for one pool, for this prompt. */
export interface PoolStatus {
  /** 0 idle .. 1 saturated (may exceed 1). */
  saturation: number
  saturated: boolean
  /** Best pod, for this prompt; null when unknown. */
  predictedTtftMs: number | null
}

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
}

export interface PolicyInput {
  request: PolicyRequest
  /** Pool id `namespace/name` -> live status; undefined = unknown (scorer not asked or unreachable). */
  poolStatus: (poolId: string) => PoolStatus | undefined
}

export interface UpstreamTarget {
  /** GatewayBackend id `namespace/name`. */
  backend: string
  locality: Locality
  /** InferencePool id, for InCluster. */
  pool?: string
  /** InferenceProvider id, for External. */
  provider?: string
  /** The model name on that pool or provider. */
  model: string
}

export interface TraceStep {
  rule: string
  outcome: 'matched' | 'skipped' | 'rewrote' | 'constraint'
  why: string
}

export type PolicyDecision =
  | {
      kind: 'serve'
      policy: string
      rule: string
      /** After aliases. */
      model: string
      /** In order; a later one is tried when an earlier local one answers saturated or is unreachable. */
      attempts: UpstreamTarget[]
      reason: string
      trace: TraceStep[]
    }
  | {
      kind: 'reject'
      policy: string | null
      rule: string | null
      status: number
      code: string
      message: string
      trace: TraceStep[]
    }
  | {
      kind: 'defer'
      policy: string
      rule: string
      retryAfterSeconds: number
      maxWaitMs: number
      pools: string[]
      maxSaturation: number
      trace: TraceStep[]
    }
