import type { InferencePolicy, KinferenceResource } from '../crd/resource.ts'
import { builtinConditions } from '../policy/conditions/builtin-conditions.ts'
import type { ConditionRegistry } from '../policy/conditions/policy-condition.ts'
import { resolveModel } from '../routing/pool-router.ts'
import { checkPolicyRules } from './check-policy-rules.ts'
import type { ConfigIssue } from './config-issue.ts'
import {
  type Indexed,
  indexResources,
  lookup,
  notFound,
  type ResourceIndex,
  resourceId,
} from './resource-index.ts'

/**
 * Everything that makes schema-valid resources an invalid configuration: duplicate
 * names, references to resources or models that do not exist, rules no request can
 * reach, and locality constraints a rule could only meet by failing.
 */
export function checkReferences(
  resources: readonly KinferenceResource[],
  defaultNamespace: string,
  conditions: ConditionRegistry = builtinConditions,
): { index: ResourceIndex; issues: ConfigIssue[] } {
  const { index, issues } = indexResources(resources, defaultNamespace)
  for (const entry of index.InferenceWorkerSet.values()) {
    const { resource, namespace } = entry
    const pool = lookup(index, 'InferencePool', namespace, resource.spec.poolRef.name)
    if (!pool) {
      issues.push(
        notFound(entry, ['spec', 'poolRef', 'name'], 'InferencePool', resource.spec.poolRef.name),
      )
    } else checkDataParallelPorts(entry, pool.resource.spec.kvEvents, issues)
  }
  for (const entry of index.GatewayBackend.values()) checkBackend(index, entry, issues)
  const tenantOwners = new Map<string, string>()
  const keyOwners = new Map<string, string>()
  for (const entry of index.InferencePolicy.values()) {
    checkTenants(entry, tenantOwners, keyOwners, issues)
    checkPolicyRules(index, entry, conditions, issues)
  }
  return { index, issues }
}

function checkBackend(
  index: ResourceIndex,
  entry: Indexed<KinferenceResource & { kind: 'GatewayBackend' }>,
  issues: ConfigIssue[],
): void {
  const { spec } = entry.resource
  const { pool: poolTarget, provider: providerTarget } = spec.target
  if (poolTarget) {
    const pool = lookup(index, 'InferencePool', entry.namespace, poolTarget.name)
    if (!pool) {
      issues.push(
        notFound(entry, ['spec', 'target', 'pool', 'name'], 'InferencePool', poolTarget.name),
      )
    } else if (!poolServes(index, pool, poolTarget.model)) {
      issues.push({
        resource: entry.index,
        path: ['spec', 'target', 'pool', 'model'],
        reason: 'NotFound',
        message: `InferencePool "${poolTarget.name}" serves no model or LoRA adapter "${poolTarget.model}"`,
      })
    }
    spec.workerSets?.forEach((name, position) => {
      const set = lookup(index, 'InferenceWorkerSet', entry.namespace, name)
      if (!set)
        issues.push(notFound(entry, ['spec', 'workerSets', position], 'InferenceWorkerSet', name))
      else if (set.resource.spec.poolRef.name !== poolTarget.name) {
        issues.push({
          resource: entry.index,
          path: ['spec', 'workerSets', position],
          reason: 'Invalid',
          message: `InferenceWorkerSet "${name}" belongs to pool "${set.resource.spec.poolRef.name}", not "${poolTarget.name}"`,
        })
      }
    })
  }
  if (providerTarget) {
    const provider = lookup(index, 'InferenceProvider', entry.namespace, providerTarget.name)
    if (!provider) {
      issues.push(
        notFound(
          entry,
          ['spec', 'target', 'provider', 'name'],
          'InferenceProvider',
          providerTarget.name,
        ),
      )
    } else if (
      !provider.resource.spec.models.some((model) => model.name === providerTarget.model)
    ) {
      issues.push({
        resource: entry.index,
        path: ['spec', 'target', 'provider', 'model'],
        reason: 'NotFound',
        message: `InferenceProvider "${providerTarget.name}" offers no model "${providerTarget.model}"`,
      })
    }
  }
}

/** A pool serves its models, their LoRA adapters, and adapters of its worker sets. */
function poolServes(
  index: ResourceIndex,
  pool: Indexed<KinferenceResource & { kind: 'InferencePool' }>,
  model: string,
): boolean {
  const name = pool.resource.metadata.name
  return (
    resolveModel(pool.resource.spec, model) !== null ||
    [...index.InferenceWorkerSet.values()].some(
      (set) =>
        set.namespace === pool.namespace &&
        set.resource.spec.poolRef.name === name &&
        set.resource.spec.loraAdapters?.includes(model) === true,
    )
  )
}

function checkTenants(
  entry: Indexed<InferencePolicy>,
  tenantOwners: Map<string, string>,
  keyOwners: Map<string, string>,
  issues: ConfigIssue[],
): void {
  const policy = resourceId(entry.namespace, entry.resource.metadata.name)
  entry.resource.spec.tenants.forEach((tenant, position) => {
    const owner = tenantOwners.get(tenant.name)
    if (owner !== undefined && owner !== policy) {
      issues.push({
        resource: entry.index,
        path: ['spec', 'tenants', position, 'name'],
        reason: 'Duplicate',
        message: `tenant "${tenant.name}" is already defined by InferencePolicy "${owner}"`,
      })
    }
    tenantOwners.set(tenant.name, policy)
    tenant.apiKeys.forEach((key, keyPosition) => {
      const keyOwner = keyOwners.get(key.id)
      if (keyOwner !== undefined) {
        issues.push({
          resource: entry.index,
          path: ['spec', 'tenants', position, 'apiKeys', keyPosition, 'id'],
          reason: 'Duplicate',
          message: `API key id "${key.id}" is already used by tenant "${keyOwner}"`,
        })
      }
      keyOwners.set(key.id, tenant.name)
    })
  })
}

/**
 * A worker set's data-parallel ranks publish on the pool's KV-event port + rank and replay
 * on its replay port + rank (vLLM's offset_endpoint_port): both ranges must be ports, and
 * must not overlap, or the pods' engines could not bind them.
 */
function checkDataParallelPorts(
  entry: Indexed<KinferenceResource & { kind: 'InferenceWorkerSet' }>,
  kvEvents: { port: number; replayPort?: number | undefined } | undefined,
  issues: ConfigIssue[],
): void {
  const size = entry.resource.spec.dataParallelSize
  if (size === 1 || !kvEvents) return
  const last = size - 1
  const ranges = [kvEvents.port, kvEvents.replayPort].filter((port) => port !== undefined)
  const problem = ranges.some((port) => port + last > 65_535)
    ? `ports ${ranges.join(' and ')} + rank up to ${last} go past 65535`
    : kvEvents.replayPort !== undefined && Math.abs(kvEvents.port - kvEvents.replayPort) < size
      ? `the KV-event ports ${kvEvents.port}-${kvEvents.port + last} and the replay ports ${kvEvents.replayPort}-${kvEvents.replayPort + last} of its pool overlap`
      : null
  if (problem === null) return
  issues.push({
    resource: entry.index,
    path: ['spec', 'dataParallelSize'],
    reason: 'Invalid',
    message: `${size} data-parallel ranks publish on the pool's ports + rank: ${problem}`,
  })
}
