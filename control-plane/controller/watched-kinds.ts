import { apiGroup } from '../../shared/crd/api-group.ts'
import { kindDefinitions, type ResourceKind, resourceKinds } from '../../shared/crd/resource.ts'
import {
  upstreamPoolGroup,
  upstreamPoolVersion,
} from '../../shared/kube/upstream-inference-pool.ts'

/** One kind the controller lists and watches, and where its API lives. */
export interface WatchedKind {
  kind: string
  group: string
  version: string
  plural: string
}

const crdVersion = 'v1alpha1'

/** The five Kinference kinds, by the plural their CRDs register. */
export const kinferenceKinds: readonly (WatchedKind & { kind: ResourceKind })[] = resourceKinds.map(
  (kind) => ({ kind, group: apiGroup, version: crdVersion, plural: kindDefinitions[kind].plural }),
)

export const podKind: WatchedKind = { kind: 'Pod', group: '', version: 'v1', plural: 'pods' }
export const endpointSliceKind: WatchedKind = {
  kind: 'EndpointSlice',
  group: 'discovery.k8s.io',
  version: 'v1',
  plural: 'endpointslices',
}

/**
 * The Gateway API Inference Extension's InferencePool. Its plural is also our pool's, so
 * the controller knows it by its full name (as kubectl does), in logs and metrics too.
 */
export const upstreamPoolKind: WatchedKind = {
  kind: `InferencePool.${upstreamPoolGroup}`,
  group: upstreamPoolGroup,
  version: upstreamPoolVersion,
  plural: 'inferencepools',
}

/** The collection path of a kind in one namespace, or in all when namespace is null. */
export function collectionPath(kind: WatchedKind, namespace: string | null): string {
  const root = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`
  return namespace === null
    ? `${root}/${kind.plural}`
    : `${root}/namespaces/${namespace}/${kind.plural}`
}
