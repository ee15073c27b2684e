import type { ConfigSnapshot } from '../config/config-snapshot.ts'
import { actionBackends } from '../crd/policy-action.ts'
import { findTenant } from './find-tenant.ts'
import { resolveBackend } from './resolve-backend.ts'

/**
 * The model names a tenant may request, for GET /v1/models: its patterns, where "*"
 * stands for every name the policy's rules open to this tenant: the models its backends
 * serve, the names rules match on (aliases rewritten by rewriteModel, names a route
 * answers to; not names a reject rule refuses). Sorted and unique; [] for an unknown tenant.
 */
export function tenantModels(snapshot: ConfigSnapshot, tenant: string): string[] {
  const governing = findTenant(snapshot, tenant)
  if (governing === null) return []
  const { policy } = governing
  const names = new Set(governing.tenant.models.filter((pattern) => pattern !== '*'))
  if (governing.tenant.models.includes('*')) {
    for (const rule of policy.spec.rules) {
      if (rule.match.tenants !== undefined && !rule.match.tenants.includes(tenant)) continue
      if (rule.action.reject) continue
      for (const model of rule.match.models ?? []) names.add(model)
      if (rule.action.rewriteModel) continue
      for (const name of actionBackends(rule.action)) {
        names.add(resolveBackend(snapshot, policy.namespace, name).target.model)
      }
    }
  }
  return [...names].sort()
}
