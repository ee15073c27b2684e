/** What the fake needs to name a resource in an error: its API group and plural. */
export interface ResourceName {
  group: string
  plural: string
  kind?: string
}

export interface StatusCause {
  reason: string
  message: string
  field?: string
}

export interface StatusDetails {
  name?: string
  group?: string
  kind?: string
  causes?: StatusCause[]
  retryAfterSeconds?: number
}

/** A failure the API answers with a `Status` object, as the real API server does. */
export class KubeError extends Error {
  readonly code: number
  readonly reason: string
  readonly details: StatusDetails | undefined

  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message)
    this.code = code
    this.reason = reason
    this.details = details
  }

  toStatus(): Record<string, unknown> {
    return failureStatus(this.code, this.reason, this.message, this.details)
  }
}

export function failureStatus(
  code: number,
  reason: string,
  message: string,
  details?: StatusDetails,
): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  }
}

/** `inferencepools.kinference.dev`, or `pods` for the core group. */
export function qualifiedResource(resource: ResourceName): string {
  return resource.group ? `${resource.plural}.${resource.group}` : resource.plural
}

function detailsOf(resource: ResourceName, name: string): StatusDetails {
  return { name, group: resource.group, kind: resource.plural }
}

export function notFound(resource: ResourceName, name: string): KubeError {
  const message = `${qualifiedResource(resource)} "${name}" not found`
  return new KubeError(404, 'NotFound', message, detailsOf(resource, name))
}

export function alreadyExists(resource: ResourceName, name: string): KubeError {
  const message = `${qualifiedResource(resource)} "${name}" already exists`
  return new KubeError(409, 'AlreadyExists', message, detailsOf(resource, name))
}

export function conflict(resource: ResourceName, name: string, why: string): KubeError {
  const message = `Operation cannot be fulfilled on ${qualifiedResource(resource)} "${name}": ${why}`
  return new KubeError(409, 'Conflict', message, detailsOf(resource, name))
}

export const staleObject =
  'the object has been modified; please apply your changes to the latest version and try again'

export function invalid(resource: ResourceName, name: string, causes: StatusCause[]): KubeError {
  const kind = resource.kind ?? resource.plural
  const qualifiedKind = resource.group ? `${kind}.${resource.group}` : kind
  const summary = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ')
  const message = `${qualifiedKind} "${name}" is invalid: ${summary}`
  return new KubeError(422, 'Invalid', message, { name, group: resource.group, kind, causes })
}

export function fieldInvalid(field: string, message: string): StatusCause {
  return { reason: 'FieldValueInvalid', message, field }
}

export function badRequest(message: string): KubeError {
  return new KubeError(400, 'BadRequest', message)
}

export function forbidden(message: string): KubeError {
  return new KubeError(403, 'Forbidden', message)
}

export function methodNotAllowed(): KubeError {
  return new KubeError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
  )
}

export function unsupportedMediaType(contentType: string, accepted: string[]): KubeError {
  return new KubeError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format (${contentType || 'none'}) - accepted media types include: ${accepted.join(', ')}`,
  )
}

export function expired(message: string): KubeError {
  return new KubeError(410, 'Expired', message)
}
