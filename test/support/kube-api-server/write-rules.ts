import { randomUUID } from 'node:crypto'
import { establishedCrdStatus } from './crd-resource-types.ts'
import {
  badRequest,
  conflict,
  fieldInvalid,
  invalid,
  type StatusCause,
  staleObject,
} from './kube-error.ts'
import {
  isRecord,
  jsonEqual,
  type KubeObject,
  kubeTime,
  type ManagedFieldsEntry,
} from './kube-object.ts'
import { apiVersionOf, type ResourceType } from './resource-registry.ts'

const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/** A request body as an object with metadata, or 400 (the server cannot decode it). */
export function asKubeObject(body: unknown): KubeObject {
  if (!isRecord(body)) throw badRequest('the request body must be a JSON object')
  const metadata = body.metadata ?? {}
  if (!isRecord(metadata)) throw badRequest('metadata must be an object')
  return { ...body, metadata: { ...metadata } } as KubeObject
}

/** apiVersion and kind must name this resource; missing ones are filled in. */
export function checkKind(type: ResourceType, object: KubeObject): void {
  const apiVersion = apiVersionOf(type)
  if (object.kind !== undefined && object.kind !== type.kind) {
    throw badRequest(`the kind of the object (${String(object.kind)}) is not ${type.kind}`)
  }
  if (object.apiVersion !== undefined && object.apiVersion !== apiVersion) {
    throw badRequest(
      `the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${apiVersion})`,
    )
  }
  object.apiVersion = apiVersion
  object.kind = type.kind
}

export function checkName(type: ResourceType, name: string): void {
  const causes: StatusCause[] = []
  const pattern = type.kind === 'Namespace' ? label : subdomain
  const limit = type.kind === 'Namespace' ? 63 : 253
  if (!pattern.test(name) || name.length > limit) {
    const what = type.kind === 'Namespace' ? 'RFC 1123 label' : 'RFC 1123 subdomain'
    causes.push(
      fieldInvalid(
        'metadata.name',
        `Invalid value: "${name}": a lowercase ${what} must consist of lower case alphanumeric characters, '-' or '.'`,
      ),
    )
  }
  if (causes.length > 0) throw invalid(type, name, causes)
}

const generatedNameAlphabet = 'bcdfghjklmnpqrstvwxz2456789'

/** `metadata.generateName` plus five random characters, as the real server picks them. */
export function generatedName(prefix: string): string {
  let suffix = ''
  for (let i = 0; i < 5; i++) {
    suffix += generatedNameAlphabet[Math.floor(Math.random() * generatedNameAlphabet.length)]
  }
  return `${prefix}${suffix}`
}

/** The name a create stores under: given, or generated from `generateName`; then checked. */
export function nameForCreate(type: ResourceType, object: KubeObject): string {
  const meta = object.metadata
  if (!meta.name && typeof meta.generateName === 'string') {
    meta.name = generatedName(meta.generateName)
  }
  if (typeof meta.name !== 'string' || meta.name === '') {
    const cause = fieldInvalid('metadata.name', 'Required value: name or generateName is required')
    throw invalid(type, '', [cause])
  }
  checkName(type, meta.name)
  return meta.name
}

/**
 * A create cannot set a status subresource: pods start Pending, CRDs come out established
 * (as the apiextensions controllers would make them). `keep` is for seeding tests.
 */
export function setInitialStatus(
  type: ResourceType,
  object: KubeObject,
  options: { keep: boolean; time: string },
): void {
  if (type.statusSubresource && !options.keep) {
    delete object.status
    if (type.kind === 'Pod') object.status = { phase: 'Pending' }
  }
  if (type.kind === 'CustomResourceDefinition') {
    object.status = establishedCrdStatus(object, options.time)
  }
}

/** Everything a writer may not set on create: the server owns it. */
export function stampCreated(object: KubeObject, now: Date): void {
  const meta = object.metadata
  meta.uid = randomUUID()
  meta.creationTimestamp = kubeTime(now)
  meta.generation = 1
  delete meta.resourceVersion
  delete meta.deletionTimestamp
  delete meta.deletionGracePeriodSeconds
  delete meta.selfLink
}

/** Optimistic concurrency: a resourceVersion (or uid) in the request must be current. */
export function checkPreconditions(
  type: ResourceType,
  current: KubeObject,
  wanted: { resourceVersion?: unknown; uid?: unknown },
): void {
  const name = current.metadata.name ?? ''
  if (wanted.uid !== undefined && wanted.uid !== '' && wanted.uid !== current.metadata.uid) {
    const why = `Precondition failed: UID in precondition: ${String(wanted.uid)}, UID in object meta: ${current.metadata.uid}`
    throw conflict(type, name, why)
  }
  const rv = wanted.resourceVersion
  if (rv !== undefined && rv !== '' && rv !== current.metadata.resourceVersion) {
    throw conflict(type, name, staleObject)
  }
}

/** Once deletion started, finalizers can only be removed. */
export function checkFinalizersWhileDeleting(
  type: ResourceType,
  current: KubeObject,
  next: KubeObject,
): void {
  if (!current.metadata.deletionTimestamp) return
  const before = new Set(current.metadata.finalizers ?? [])
  if ((next.metadata.finalizers ?? []).every((f) => before.has(f))) return
  const cause = fieldInvalid(
    'metadata.finalizers',
    'Forbidden: no new finalizers can be added if the object is being deleted',
  )
  throw invalid(type, current.metadata.name ?? '', [cause])
}

/** The object a write produces from the stored one, before generation and no-op checks. */
export function mergeWrite(
  type: ResourceType,
  current: KubeObject,
  candidate: KubeObject,
  subresource: string | undefined,
): KubeObject {
  if (subresource === 'status') {
    // A status write changes nothing but .status (metadata too comes from storage).
    const next = structuredClone(current)
    if (candidate.status === undefined) delete next.status
    else next.status = candidate.status
    return next
  }
  const next = structuredClone(candidate)
  const owned = [
    'uid',
    'creationTimestamp',
    'generation',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'resourceVersion',
    'managedFields',
  ]
  for (const field of owned) {
    if (current.metadata[field] === undefined) delete next.metadata[field]
    else next.metadata[field] = current.metadata[field]
  }
  next.metadata.name = current.metadata.name
  if (current.metadata.namespace !== undefined) next.metadata.namespace = current.metadata.namespace
  if (type.statusSubresource) {
    if (current.status === undefined) delete next.status
    else next.status = current.status
  }
  return next
}

/** What metadata.generation tracks: all but metadata (and status, when it is a subresource). */
function desiredState(type: ResourceType, object: KubeObject): Record<string, unknown> {
  const { metadata: _m, apiVersion: _a, kind: _k, status, ...rest } = object
  return type.statusSubresource ? rest : { ...rest, status }
}

export function bumpGenerationIfChanged(
  type: ResourceType,
  current: KubeObject,
  next: KubeObject,
): void {
  if (!jsonEqual(desiredState(type, current), desiredState(type, next))) {
    next.metadata.generation = (current.metadata.generation ?? 0) + 1
  }
}

/** A write that changes nothing is not stored: no new resourceVersion, no watch event. */
export function isNoOp(current: KubeObject, next: KubeObject): boolean {
  const strip = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } })
  return jsonEqual(strip(current), strip(next))
}

/** One managedFields entry per manager, operation and subresource (fieldsV1 left empty). */
export function recordManager(
  object: KubeObject,
  entry: { manager: string; operation: 'Apply' | 'Update'; subresource?: string },
  now: Date,
): void {
  const others = (object.metadata.managedFields ?? []).filter(
    (f) =>
      f.manager !== entry.manager ||
      f.operation !== entry.operation ||
      f.subresource !== entry.subresource,
  )
  const recorded: ManagedFieldsEntry = {
    manager: entry.manager,
    operation: entry.operation,
    apiVersion: object.apiVersion ?? '',
    time: kubeTime(now),
    fieldsType: 'FieldsV1',
    fieldsV1: {},
    ...(entry.subresource ? { subresource: entry.subresource } : {}),
  }
  object.metadata.managedFields = [...others, recorded]
}

/** Secrets: `stringData` is write-only, merged into base64 `data`. */
export function normalizeSecret(object: KubeObject): void {
  if (object.type === undefined) object.type = 'Opaque'
  if (!isRecord(object.stringData)) return
  const data = isRecord(object.data) ? { ...object.data } : {}
  for (const [key, value] of Object.entries(object.stringData)) {
    data[key] = Buffer.from(String(value)).toString('base64')
  }
  object.data = data
  delete object.stringData
}
