import type { ConfigSnapshot, SnapshotPolicy } from '../config/config-snapshot.ts'
import type { Tenant } from '../crd/inference-policy.ts'

/** The tenant's record and its policy, or null when the snapshot does not know it. */
export function findTenant(
  snapshot: ConfigSnapshot,
  name: string,
): { policyId: string; policy: SnapshotPolicy; tenant: Tenant } | null {
  const policyId = Object.hasOwn(snapshot.tenants, name) ? snapshot.tenants[name] : undefined
  const policy = policyId === undefined ? undefined : snapshot.policies[policyId]
  const tenant = policy?.spec.tenants.find((t) => t.name === name)
  if (policyId === undefined || policy === undefined || tenant === undefined) return null
  return { policyId, policy, tenant }
}

/** Checked on the name as requested, before any alias: "*" allows any model. */
export function modelAllowed(tenant: Tenant, model: string): boolean {
  return tenant.models.includes('*') || tenant.models.includes(model)
}
