import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { apiVersion } from '../../shared/crd/api-group.ts'
import type { KinferenceResource } from '../../shared/crd/resource.ts'

/**
 * The resources a live snapshot carries, as the last accepted versions: a controller that
 * starts (or takes over) with a broken resource in the cluster keeps serving what is live
 * instead of dropping it for want of a previous version.
 */
export function seededResources(snapshot: ConfigSnapshot): Map<string, KinferenceResource> {
  const tables = {
    InferencePool: snapshot.pools,
    InferenceWorkerSet: snapshot.workerSets,
    InferenceProvider: snapshot.providers,
    GatewayBackend: snapshot.backends,
    InferencePolicy: snapshot.policies,
  }
  const seeded = new Map<string, KinferenceResource>()
  for (const [kind, table] of Object.entries(tables)) {
    for (const entry of Object.values(table)) {
      const { locality: _locality, ...rest } = entry as typeof entry & { locality?: unknown }
      seeded.set(`${kind}/${rest.namespace}/${rest.name}`, {
        apiVersion,
        kind,
        metadata: { name: rest.name, namespace: rest.namespace },
        spec: rest.spec,
      } as KinferenceResource)
    }
  }
  return seeded
}
