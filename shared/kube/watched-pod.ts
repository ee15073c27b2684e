import { z } from 'zod'
import type { UpstreamInferencePool } from './upstream-inference-pool.ts'

const Labels = z.record(z.string(), z.string())

/**
 * The part of a core/v1 Pod the controller reads: identity, labels (pool and worker-set
 * selectors match them) and whether it is terminating. Everything else is ignored, so a
 * Pod as the API server returns it parses as it is.
 */
export const WatchedPod = z.looseObject({
  apiVersion: z.literal('v1').optional(),
  kind: z.literal('Pod').optional(),
  metadata: z.looseObject({
    name: z.string().min(1).max(253),
    namespace: z.string().min(1).max(63),
    labels: Labels.optional(),
    deletionTimestamp: z.string().nullish(),
  }),
  status: z.looseObject({ podIP: z.string().max(64).nullish() }).nullish(),
})
export type WatchedPod = z.infer<typeof WatchedPod>

const EndpointConditions = z.looseObject({
  ready: z.boolean().nullish(),
  serving: z.boolean().nullish(),
  terminating: z.boolean().nullish(),
})

/** discovery.k8s.io/v1 EndpointSlice, as far as endpoint discovery reads it. */
export const WatchedEndpointSlice = z.looseObject({
  apiVersion: z.literal('discovery.k8s.io/v1').optional(),
  kind: z.literal('EndpointSlice').optional(),
  metadata: z.looseObject({
    name: z.string().min(1).max(253),
    namespace: z.string().min(1).max(63),
    labels: Labels.optional(),
  }),
  addressType: z.enum(['IPv4', 'IPv6', 'FQDN']),
  endpoints: z
    .array(
      z.looseObject({
        addresses: z.array(z.string().min(1).max(253)).min(1).max(100),
        conditions: EndpointConditions.nullish(),
        targetRef: z
          .looseObject({
            kind: z.string().optional(),
            name: z.string(),
            namespace: z.string().optional(),
          })
          .nullish(),
      }),
    )
    .max(1_000)
    .nullish(),
})
export type WatchedEndpointSlice = z.infer<typeof WatchedEndpointSlice>

/** The Pods and EndpointSlices endpoints are resolved from. */
export interface Workloads {
  pods: readonly WatchedPod[]
  endpointSlices: readonly WatchedEndpointSlice[]
  /**
   * Upstream InferencePools a pool's `upstreamPoolRef` may name: the controller passes
   * those whose endpointPickerRef names its Endpoint Picker; none when absent.
   */
  upstreamPools?: readonly UpstreamInferencePool[]
}

export const noWorkloads: Workloads = { pods: [], endpointSlices: [] }

/**
 * Kubernetes' rules for an EndpointSlice endpoint: `ready` unset means ready, and a
 * terminating endpoint is never taken for new traffic even while it still serves.
 */
export function isReadyEndpoint(conditions: z.infer<typeof EndpointConditions> | null | undefined) {
  return conditions?.ready !== false && conditions?.terminating !== true
}
