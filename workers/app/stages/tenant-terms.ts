import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { decisionHeadersVisible } from '../../../shared/policy/decision-headers-visible.ts'
import { type EdgeStage, edgeStage, type TenantTerms } from './edge-stage.ts'

/** Stage 3: what the tenant's policy grants it: its quotas, and whether it sees routing headers. */
export function tenantTerms(): EdgeStage<'snapshot' | 'identity', 'terms'> {
  return edgeStage(
    'tenantTerms',
    { reads: ['snapshot', 'identity'], sets: ['terms'] },
    async (c, next) => {
      c.set('terms', termsOf(c.get('snapshot'), c.get('identity').tenant))
      await next()
    },
  )
}

/** The tenant's terms in `snapshot`; a tenant its policy does not list has no quotas. */
export function termsOf(snapshot: ConfigSnapshot, tenant: string): TenantTerms {
  const policyId = snapshot.tenants[tenant]
  const spec = snapshot.policies[policyId ?? '']?.spec.tenants.find((t) => t.name === tenant)
  return {
    quotas: spec?.quotas ?? {},
    decisionHeaders: decisionHeadersVisible(snapshot, tenant),
  }
}
