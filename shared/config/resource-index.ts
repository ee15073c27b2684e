import type {
  GatewayBackend,
  InferencePolicy,
  InferencePool,
  InferenceProvider,
  InferenceWorkerSet,
  KinferenceResource,
  ResourceKind,
} from '../crd/resource.ts'
import type { ConfigIssue } from './config-issue.ts'
import { resourceId } from './resource-id.ts'

// In a file of its own so the rule conditions can name pools without importing the kinds.
export { resourceId }

export interface Indexed<R> {
  index: number
  namespace: string
  resource: R
}

/** Resources of one configuration, by kind and id, as references resolve them. */
export interface ResourceIndex {
  InferencePool: Map<string, Indexed<InferencePool>>
  InferenceWorkerSet: Map<string, Indexed<InferenceWorkerSet>>
  InferenceProvider: Map<string, Indexed<InferenceProvider>>
  GatewayBackend: Map<string, Indexed<GatewayBackend>>
  InferencePolicy: Map<string, Indexed<InferencePolicy>>
}

/**
 * Indexes resources by kind and id. A second resource with the same kind, namespace and
 * name is reported and left out of the index, so references resolve to the first one.
 */
export function indexResources(
  resources: readonly KinferenceResource[],
  defaultNamespace: string,
): { index: ResourceIndex; issues: ConfigIssue[] } {
  const index: ResourceIndex = {
    InferencePool: new Map(),
    InferenceWorkerSet: new Map(),
    InferenceProvider: new Map(),
    GatewayBackend: new Map(),
    InferencePolicy: new Map(),
  }
  const issues: ConfigIssue[] = []
  resources.forEach((resource, position) => {
    const namespace = resource.metadata.namespace ?? defaultNamespace
    const id = resourceId(namespace, resource.metadata.name)
    const byId = index[resource.kind] as Map<string, Indexed<KinferenceResource>>
    const first = byId.get(id)
    if (first !== undefined) {
      issues.push({
        resource: position,
        path: ['metadata', 'name'],
        reason: 'Duplicate',
        message: `duplicate ${resource.kind} "${id}": the first definition is used`,
      })
      return
    }
    byId.set(id, { index: position, namespace, resource })
  })
  return { index, issues }
}

export function lookup<K extends ResourceKind>(
  index: ResourceIndex,
  kind: K,
  namespace: string,
  name: string,
): ResourceIndex[K] extends Map<string, infer V> ? V | undefined : never {
  return (index[kind] as Map<string, unknown>).get(resourceId(namespace, name)) as never
}

/** The issue of a reference from `entry` to a resource of `kind` its namespace lacks. */
export function notFound(
  entry: Indexed<unknown>,
  path: ConfigIssue['path'],
  kind: string,
  name: string,
): ConfigIssue {
  return {
    resource: entry.index,
    path,
    reason: 'NotFound',
    message: `${kind} "${name}" not found in namespace "${entry.namespace}"`,
    target: { kind, namespace: entry.namespace, name },
  }
}
