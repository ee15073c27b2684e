import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { tenantModels } from '../../shared/policy/tenant-models.ts'
import type { EdgeRequestLabels } from './edge-metrics.ts'

/** The tenant label of a request no key authenticated (a tenant name is a resource name). */
export const noTenant = 'none'
/** The model label of a request that named none the edge read (failed before its body, /v1/models). */
export const noModel = 'none'
/** The model label of a name the tenant's policy does not list: any client string lands here. */
export const otherModel = 'other'

/** What a request's labels are read from: what its stages set, when they got that far. */
export interface LabelSource {
  snapshot?: ConfigSnapshot | undefined
  tenant?: string | undefined
  model?: string | undefined
}

/**
 * The tenant and model labels of the edge's per-request series, bounded whatever clients
 * send: the tenant is the one its key belongs to (the config's), the model one of the
 * names the tenant's policy lists (tenantModels, as GET /v1/models answers) or `other`.
 * A pool serving "*" answers any name, so a served request proves nothing of its name.
 */
export function createRequestLabeller(): (source: LabelSource) => EdgeRequestLabels {
  const listed = new WeakMap<ConfigSnapshot, Map<string, ReadonlySet<string>>>()
  const modelsOf = (snapshot: ConfigSnapshot, tenant: string): ReadonlySet<string> => {
    let byTenant = listed.get(snapshot)
    if (!byTenant) {
      byTenant = new Map()
      listed.set(snapshot, byTenant)
    }
    let models = byTenant.get(tenant)
    if (!models) {
      models = new Set(tenantModels(snapshot, tenant))
      byTenant.set(tenant, models)
    }
    return models
  }
  return ({ snapshot, tenant, model }) => {
    if (tenant === undefined) return { tenant: noTenant, model: noModel }
    if (model === undefined) return { tenant, model: noModel }
    const known = snapshot !== undefined && modelsOf(snapshot, tenant).has(model)
    return { tenant, model: known ? model : otherModel }
  }
}
