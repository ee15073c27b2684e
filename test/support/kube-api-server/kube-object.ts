/** The parts of ObjectMeta the fake server reads or writes; the rest is kept as sent. */
export interface ObjectMeta {
  name?: string
  generateName?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  deletionTimestamp?: string
  deletionGracePeriodSeconds?: number
  labels?: Record<string, string>
  annotations?: Record<string, string>
  finalizers?: string[]
  managedFields?: ManagedFieldsEntry[]
  [field: string]: unknown
}

export interface ManagedFieldsEntry {
  manager: string
  operation: 'Apply' | 'Update'
  apiVersion: string
  time: string
  fieldsType: 'FieldsV1'
  fieldsV1: Record<string, unknown>
  subresource?: string
}

export interface KubeObject {
  apiVersion?: string
  kind?: string
  metadata: ObjectMeta
  [field: string]: unknown
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Structural equality of JSON values (key order ignored, as in the API server's comparison). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]))
  }
  if (!isRecord(a) || !isRecord(b)) return false
  const keys = Object.keys(a).filter((k) => a[k] !== undefined)
  if (keys.length !== Object.keys(b).filter((k) => b[k] !== undefined).length) return false
  return keys.every((k) => jsonEqual(a[k], b[k]))
}

/** RFC 3339 with second precision, as Kubernetes writes metav1.Time. */
export function kubeTime(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`
}
