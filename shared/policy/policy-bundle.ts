import type { ConfigSnapshot } from '../config/config-snapshot.ts'
import { resourceId } from '../config/resource-index.ts'
import { actionBackends } from '../crd/policy-action.ts'
import { builtinConditions } from './conditions/builtin-conditions.ts'
import type { ConditionRegistry } from './conditions/policy-condition.ts'
import { statusPools } from './match-rule.ts'

/**
 * The part of a snapshot that one tenant's policy reads, as a snapshot of its own: the
 * tenant (its entry alone), its policy, the backends its rules name and the pools and
 * providers those backends and its pool conditions point at. The edge sends it with a
 * status-dependent request, so the scorer decides with the edge's very config, whichever
 * snapshot the scorer itself has. evaluatePolicy gives the same decision on it as on the
 * whole snapshot (tested). null when the snapshot does not know the tenant. Its pool
 * conditions are the registry's that reads the policy's status conditions.
 */
export function policyBundleOf(
  snapshot: ConfigSnapshot,
  tenant: string,
  conditions: ConditionRegistry = builtinConditions,
): ConfigSnapshot | null {
  const policyId = Object.hasOwn(snapshot.tenants, tenant) ? snapshot.tenants[tenant] : undefined
  const policy = policyId === undefined ? undefined : snapshot.policies[policyId]
  if (policyId === undefined || policy === undefined) return null
  const bundle: ConfigSnapshot = {
    kind: snapshot.kind,
    schemaVersion: snapshot.schemaVersion,
    hash: snapshot.hash,
    pools: {},
    workerSets: {},
    providers: {},
    backends: {},
    // The scorer knows its pods; a bundle travels with every request, so it carries none.
    endpoints: {},
    policies: {
      [policyId]: {
        ...policy,
        spec: { ...policy.spec, tenants: policy.spec.tenants.filter((t) => t.name === tenant) },
      },
    },
    tenants: { [tenant]: policyId },
  }
  const addPool = (id: string) => {
    const pool = snapshot.pools[id]
    if (pool) bundle.pools[id] = pool
  }
  for (const rule of policy.spec.rules) {
    for (const id of statusPools(rule.match, policy.namespace, conditions)) addPool(id)
    for (const name of actionBackends(rule.action)) {
      const id = resourceId(policy.namespace, name)
      const backend = snapshot.backends[id]
      if (!backend) continue
      bundle.backends[id] = backend
      const { pool, provider } = backend.spec.target
      if (pool) addPool(resourceId(backend.namespace, pool.name))
      if (provider) {
        const providerId = resourceId(backend.namespace, provider.name)
        const found = snapshot.providers[providerId]
        if (found) bundle.providers[providerId] = found
      }
    }
  }
  return bundle
}
