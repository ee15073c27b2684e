import type { ResourceType } from './resource-registry.ts'

interface BuiltIn {
  group: string
  version: string
  kind: string
  plural: string
  namespaced: boolean
  shortNames?: string[]
  categories?: string[]
  statusSubresource?: boolean
}

/** The built-in kinds a Kinference controller and kubectl touch; others answer 404. */
const builtIns: BuiltIn[] = [
  {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    shortNames: ['ns'],
  },
  {
    group: '',
    version: 'v1',
    kind: 'Pod',
    plural: 'pods',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    statusSubresource: true,
  },
  {
    group: '',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    shortNames: ['ev'],
  },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    shortNames: ['cm'],
  },
  {
    group: 'discovery.k8s.io',
    version: 'v1',
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    namespaced: true,
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    namespaced: true,
  },
  // What the Helm chart (infra/helm/kinference) and its vLLM example create.
  {
    group: '',
    version: 'v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    statusSubresource: true,
  },
  {
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    namespaced: true,
    shortNames: ['sa'],
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    statusSubresource: true,
  },
  ...(['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'] as const).map((kind) => ({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind,
    plural: `${kind.toLowerCase()}s`,
    namespaced: !kind.startsWith('Cluster'),
  })),
  {
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'NetworkPolicy',
    plural: 'networkpolicies',
    namespaced: true,
    shortNames: ['netpol'],
  },
  {
    group: 'autoscaling',
    version: 'v2',
    kind: 'HorizontalPodAutoscaler',
    plural: 'horizontalpodautoscalers',
    namespaced: true,
    shortNames: ['hpa'],
    categories: ['all'],
    statusSubresource: true,
  },
  {
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    namespaced: true,
    shortNames: ['pdb'],
    statusSubresource: true,
  },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    statusSubresource: true,
  },
]

export function builtInResources(): ResourceType[] {
  return builtIns.map((b) => ({
    group: b.group,
    version: b.version,
    kind: b.kind,
    listKind: `${b.kind}List`,
    plural: b.plural,
    singular: b.kind.toLowerCase(),
    namespaced: b.namespaced,
    shortNames: b.shortNames ?? [],
    categories: b.categories ?? [],
    // Namespaces have a status subresource too, but nothing here writes namespace status.
    statusSubresource: b.statusSubresource ?? false,
    printerColumns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
    unconditionalUpdate: true,
  }))
}
