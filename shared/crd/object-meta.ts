import { z } from 'zod'
import { dnsLabelPattern } from './api-group.ts'

/** A resource name: a DNS-1123 label, because other resources refer to it. */
export const ResourceName = z
  .string()
  .min(1)
  .max(63)
  .regex(dnsLabelPattern, 'must be a DNS-1123 label: lower-case letters, digits and "-"')
export type ResourceName = z.infer<typeof ResourceName>

const labelValue = z.string().max(63)

/**
 * The part of Kubernetes ObjectMeta that Kinference reads. Other fields a cluster adds
 * (uid, resourceVersion, managedFields, ...) are accepted and ignored, so `kubectl get -o
 * yaml` output validates as it is.
 */
export const ObjectMeta = z.looseObject({
  name: ResourceName,
  namespace: ResourceName.optional(),
  labels: z.record(z.string().max(317), labelValue).optional(),
  annotations: z.record(z.string().max(317), z.string()).optional(),
  generation: z.int().min(0).optional(),
})
export type ObjectMeta = z.infer<typeof ObjectMeta>

/** A reference to another Kinference resource in the same namespace. */
export const LocalObjectReference = z.strictObject({
  name: ResourceName.describe('Name of the referenced resource, in the same namespace.'),
})
export type LocalObjectReference = z.infer<typeof LocalObjectReference>

/** Kubernetes' matchLabels label selector (matchExpressions are not needed by any policy yet). */
export const LabelSelector = z
  .strictObject({
    matchLabels: z
      .record(z.string().min(1).max(317), labelValue)
      .describe('Pods carrying all of these labels are selected.'),
  })
  .describe('Selects pods by label.')
export type LabelSelector = z.infer<typeof LabelSelector>
