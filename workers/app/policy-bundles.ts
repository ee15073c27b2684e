import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { ConditionRegistry } from '../../shared/policy/conditions/policy-condition.ts'
import { policyBundleOf } from '../../shared/policy/policy-bundle.ts'

const bundlesBySnapshot = new WeakMap<ConfigSnapshot, Map<string, string | null>>()

/**
 * The tenant's policy bundle as the JSON a route call carries, serialized once per
 * snapshot and tenant (the snapshot is immutable, and an app reads every snapshot under
 * the same conditions); null for an unknown tenant.
 */
export function policyBundleJson(
  snapshot: ConfigSnapshot,
  tenant: string,
  conditions?: ConditionRegistry,
): string | null {
  let byTenant = bundlesBySnapshot.get(snapshot)
  if (!byTenant) {
    byTenant = new Map()
    bundlesBySnapshot.set(snapshot, byTenant)
  }
  let json = byTenant.get(tenant)
  if (json === undefined) {
    const bundle = policyBundleOf(snapshot, tenant, conditions)
    json = bundle === null ? null : JSON.stringify(bundle)
    byTenant.set(tenant, json)
  }
  return json
}
