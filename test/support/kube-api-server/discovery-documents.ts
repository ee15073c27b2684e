import { apiVersionOf, type ResourceRegistry, resourceVerbs } from './resource-registry.ts'

/** What `/version` says: kubectl warns when it is more than one minor away from itself. */
export function versionInfo(): Record<string, unknown> {
  return {
    major: '1',
    minor: '33',
    gitVersion: 'v1.33.0-kinference-test',
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'go1.24.0',
    compiler: 'gc',
    platform: 'linux/amd64',
  }
}

/**
 * Legacy (unaggregated) discovery: kubectl asks for aggregated APIGroupDiscoveryList
 * first but accepts these, then reads each group version's APIResourceList.
 */
export function coreApiVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  }
}

export function apiGroup(registry: ResourceRegistry, group: string): Record<string, unknown> {
  const versions = (registry.groupVersions().get(group) ?? []).map((version) => ({
    groupVersion: `${group}/${version}`,
    version,
  }))
  return {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: group,
    versions,
    preferredVersion: versions[0],
  }
}

export function apiGroupList(registry: ResourceRegistry): Record<string, unknown> {
  const groups = [...registry.groupVersions().keys()].filter((group) => group !== '')
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups.map((group) => {
      const { name, versions, preferredVersion } = apiGroup(registry, group)
      return { name, versions, preferredVersion }
    }),
  }
}

export function apiResourceList(
  registry: ResourceRegistry,
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const types = registry.inGroupVersion(group, version)
  if (types.length === 0) return undefined
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: apiVersionOf({ group, version }),
    resources: types.flatMap((type) => {
      const main = {
        name: type.plural,
        singularName: type.singular,
        namespaced: type.namespaced,
        kind: type.kind,
        verbs: resourceVerbs,
        ...(type.shortNames.length > 0 ? { shortNames: type.shortNames } : {}),
        ...(type.categories.length > 0 ? { categories: type.categories } : {}),
      }
      if (!type.statusSubresource) return [main]
      const status = {
        name: `${type.plural}/status`,
        singularName: '',
        namespaced: type.namespaced,
        kind: type.kind,
        verbs: ['get', 'patch', 'update'],
      }
      return [main, status]
    }),
  }
}
