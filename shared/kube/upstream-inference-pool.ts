import { z } from 'zod'

/** The Gateway API Inference Extension's group; its InferencePool shares our plural. */
export const upstreamPoolGroup = 'inference.networking.k8s.io'
export const upstreamPoolVersion = 'v1'

/**
 * The part of an upstream `inference.networking.k8s.io/v1` InferencePool the controller
 * reads: identity, the pods it selects (matchLabels only, as the API allows), its target
 * ports (each one a distinct endpoint `podIP:port`) and which Endpoint Picker it names.
 * Loose, so an object as the API server returns it parses as it is.
 */
export const UpstreamInferencePool = z.looseObject({
  metadata: z.looseObject({
    name: z.string().min(1).max(253),
    namespace: z.string().min(1).max(63),
    generation: z.int().min(0).optional(),
    creationTimestamp: z.string().optional(),
  }),
  spec: z.looseObject({
    selector: z.looseObject({
      matchLabels: z.record(z.string(), z.string()),
    }),
    targetPorts: z
      .array(z.looseObject({ number: z.int().min(1).max(65_535) }))
      .min(1)
      .max(8),
    endpointPickerRef: z
      .looseObject({
        group: z.string().default(''),
        kind: z.string().default('Service'),
        name: z.string().min(1),
      })
      .nullish(),
  }),
})
export type UpstreamInferencePool = z.infer<typeof UpstreamInferencePool>

/**
 * Whether the pool's endpointPickerRef names the Service `service` of the pool's own
 * namespace (refs are namespace-local): kind Service (the default) in the core group
 * (the default).
 */
export function namesEndpointPicker(pool: UpstreamInferencePool, service: string): boolean {
  const ref = pool.spec.endpointPickerRef
  return !!ref && ref.group === '' && ref.kind === 'Service' && ref.name === service
}

/** The target port numbers of a pool, in the order the pool lists them. */
export function targetPortsOf(pool: UpstreamInferencePool): number[] {
  return pool.spec.targetPorts.map((port) => port.number)
}
