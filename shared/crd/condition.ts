import { z } from 'zod'

/** metav1.Condition, with the same limits the API server applies. */
export const Condition = z.strictObject({
  type: z
    .string()
    .max(316)
    .regex(
      /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
    )
    .describe('Condition type: Accepted, ResolvedRefs or Ready.'),
  status: z.enum(['True', 'False', 'Unknown']).describe('Status of the condition.'),
  observedGeneration: z
    .int()
    .min(0)
    .optional()
    .describe('metadata.generation the condition was computed from.'),
  lastTransitionTime: z.iso.datetime().describe('When the status last changed.'),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
    .describe('Machine-readable CamelCase reason.'),
  message: z.string().max(32768).describe('Human-readable details.'),
})
export type Condition = z.infer<typeof Condition>

/** The stable set of condition types every Kinference resource reports. */
export const conditionTypes = ['Accepted', 'ResolvedRefs', 'Ready'] as const

/** Status fields common to every kind; kinds extend it. */
export const CommonStatus = z.strictObject({
  observedGeneration: z
    .int()
    .min(0)
    .optional()
    .describe('metadata.generation the controller last acted on.'),
  conditions: z
    .array(Condition)
    .max(8)
    .optional()
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
    .describe('Accepted, ResolvedRefs and Ready, each True or False.'),
})
export type CommonStatus = z.infer<typeof CommonStatus>
