import type { ConfigSnapshot, SnapshotPolicy } from '../config/config-snapshot.ts'
import type { PolicyRule } from '../crd/inference-policy.ts'
import { actionBackends } from '../crd/policy-action.ts'
import { findTenant } from './find-tenant.ts'
import { resolveBackend } from './resolve-backend.ts'

/**
 * The model names a tenant may request and its policy serves, for GET /v1/models: its
 * names, where "*" stands for every name the rules open to it (the names rules match on,
 * aliases included; the models of backends a rule serves whatever model is asked). A name
 * is listed only when a rule would serve it (servesModel), so the list never names a
 * model that then gets 404. Sorted and unique; [] for an unknown tenant.
 */
export function tenantModels(snapshot: ConfigSnapshot, tenant: string): string[] {
  const governing = findTenant(snapshot, tenant)
  if (governing === null) return []
  const { policy } = governing
  const names = new Set(governing.tenant.models.filter((pattern) => pattern !== '*'))
  if (governing.tenant.models.includes('*')) {
    for (const rule of policy.spec.rules) {
      if (!forTenant(rule, tenant) || rule.action.reject) continue
      for (const model of rule.match.models ?? []) names.add(model)
      // A rule that names its models serves only those; the backends' own names are not
      // requests it answers (the "auto" rule's pools serve their models under "auto").
      if (rule.action.rewriteModel || rule.match.models !== undefined) continue
      for (const name of actionBackends(rule.action)) {
        names.add(resolveBackend(snapshot, policy.namespace, name).target.model)
      }
    }
  }
  return [...names].filter((model) => servesModel(policy, tenant, model)).sort()
}

/**
 * Whether some rule may serve `model` for `tenant`: the rules in order, aliases followed,
 * the first that applies to this tenant and model deciding. A rule with conditions beyond
 * tenants and models (labels, prompt length, pool status) may or may not fire, so a
 * conditional reject is passed over and a conditional serve counts.
 */
export function servesModel(policy: SnapshotPolicy, tenant: string, model: string): boolean {
  let name = model
  for (const rule of policy.spec.rules) {
    if (!forTenant(rule, tenant)) continue
    if (rule.match.models !== undefined && !rule.match.models.includes(name)) continue
    if (rule.action.rewriteModel) {
      name = rule.action.rewriteModel.model
      continue
    }
    if (!rule.action.reject) return true
    if (!conditional(rule)) return false
  }
  return false
}

function forTenant(rule: PolicyRule, tenant: string): boolean {
  return rule.match.tenants === undefined || rule.match.tenants.includes(tenant)
}

/** The rule's match sets a condition other than tenants and models. */
function conditional(rule: PolicyRule): boolean {
  return Object.entries(rule.match).some(
    ([key, value]) => value !== undefined && key !== 'tenants' && key !== 'models',
  )
}
