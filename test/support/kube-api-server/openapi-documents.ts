import { createHash } from 'node:crypto'
import type { ResourceRegistry, ResourceType } from './resource-registry.ts'

/**
 * Just enough OpenAPI v3 for kubectl: per group version, a PATCH operation per resource
 * that names its kind and takes `fieldValidation`, so kubectl leaves validation to the
 * server (which prunes unknown fields, and rejects them under Strict) instead of
 * downloading schemas to validate client-side. OpenAPI v2 is not served.
 */
export function openApiIndex(registry: ResourceRegistry): Record<string, unknown> {
  const paths: Record<string, { serverRelativeURL: string }> = {}
  for (const [group, versions] of registry.groupVersions()) {
    for (const version of versions) {
      const path = groupVersionPath(group, version)
      const hash = createHash('sha512')
        .update(JSON.stringify(openApiGroupVersion(registry, group, version)))
        .digest('hex')
        .toUpperCase()
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` }
    }
  }
  return { paths }
}

/** The OpenAPI path segments (`api/v1`, `apis/g/v`) as group and version. */
export function parseOpenApiPath(parts: string[]): { group: string; version: string } | undefined {
  const [root, first, second, ...rest] = parts
  if (root === 'api' && first === 'v1' && second === undefined) return { group: '', version: 'v1' }
  if (root === 'apis' && first && second && rest.length === 0)
    return { group: first, version: second }
  return undefined
}

export function openApiGroupVersion(
  registry: ResourceRegistry,
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const types = registry.inGroupVersion(group, version)
  if (types.length === 0) return undefined
  const paths: Record<string, unknown> = {}
  const schemas: Record<string, unknown> = {}
  for (const type of types) {
    const item = `/${groupVersionPath(group, version)}${type.namespaced ? '/namespaces/{namespace}' : ''}/${type.plural}/{name}`
    paths[item] = { patch: patchOperation(type) }
    if (type.statusSubresource) paths[`${item}/status`] = { patch: patchOperation(type) }
    if (type.schema) {
      schemas[schemaName(type)] = {
        ...type.schema,
        'x-kubernetes-group-version-kind': [gvk(type)],
      }
    }
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.33.0' },
    paths,
    components: { schemas },
  }
}

function groupVersionPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`
}

function gvk(type: ResourceType) {
  return { group: type.group, version: type.version, kind: type.kind }
}

/** `dev.kinference.v1alpha1.InferencePool`, the reversed-group naming the server uses. */
function schemaName(type: ResourceType): string {
  return `${type.group.split('.').reverse().join('.')}.${type.version}.${type.kind}`
}

/**
 * No strategic-merge-patch here, even for built-ins: kubectl would then compute it from
 * OpenAPI schemas this server does not have, instead of from its compiled-in types.
 */
function patchOperation(type: ResourceType): Record<string, unknown> {
  const query = (name: string, schemaType = 'string') => ({
    name,
    in: 'query',
    schema: { type: schemaType, uniqueItems: true },
  })
  const content = { schema: { type: 'object' } }
  return {
    operationId: `patch${type.kind}`,
    parameters: [
      query('dryRun'),
      query('fieldManager'),
      query('fieldValidation'),
      query('force', 'boolean'),
    ],
    requestBody: {
      content: {
        'application/json-patch+json': content,
        'application/merge-patch+json': content,
        'application/apply-patch+yaml': content,
      },
    },
    responses: { '200': { description: 'OK' } },
    'x-kubernetes-action': 'patch',
    'x-kubernetes-group-version-kind': gvk(type),
  }
}
