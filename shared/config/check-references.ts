import { backendLocality } from '../crd/gateway-backend.ts'
import { actionBackends, isTerminalAction } from '../crd/policy-action.ts'
import type { InferencePolicy, KinferenceResource } from '../crd/resource.ts'
import { builtinConditions } from '../policy/conditions/builtin-conditions.ts'
import type { ConditionRegistry } from '../policy/conditions/policy-condition.ts'
import type { ConditionValues } from '../policy/match-rule.ts'
import type { ConfigIssue } from './config-issue.ts'
import {
  type Indexed,
  indexResources,
  lookup,
  type ResourceIndex,
  resourceId,
} from './resource-index.ts'
import { matchRequiresAnyLabel, ruleCovers } from './rule-covers.ts'

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
    checkRules(index, entry, conditions, issues)
  }
  return { index, issues }
}

function notFound(
  entry: Indexed<unknown>,
  path: ConfigIssue['path'],
  kind: string,
  name: string,
): ConfigIssue {
  return {
    resource: entry.index,
    path,
    reason: 'NotFound',
    message: `${kind} "${name}" not found in namespace "${entry.namespace}"`,
    target: { kind, namespace: entry.namespace, name },
  }
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
    pool.resource.spec.models.some((m) => m.name === model || m.loraAdapters?.includes(model)) ||
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

function checkRules(
  index: ResourceIndex,
  entry: Indexed<InferencePolicy>,
  conditions: ConditionRegistry,
  issues: ConfigIssue[],
): void {
  const { spec } = entry.resource
  spec.rules.forEach((rule, position) => {
    const at = ['spec', 'rules', position]
    checkConditionReferences(index, entry, position, conditions, issues)
    checkActionBackends(index, entry, position, issues)
    const shadowing = spec.rules
      .slice(0, position)
      .find(
        (earlier) =>
          isTerminalAction(earlier.action) && ruleCovers(earlier.match, rule.match, conditions),
      )
    if (shadowing) {
      issues.push({
        resource: entry.index,
        path: [...at, 'name'],
        reason: 'Unreachable',
        message: `rule "${rule.name}" is unreachable: the earlier rule "${shadowing.name}" matches every request it matches`,
      })
    }
  })
  checkLocality(index, entry, issues)
}

/** The tenants and resources a rule's conditions name exist (tenants in its own policy). */
function checkConditionReferences(
  index: ResourceIndex,
  entry: Indexed<InferencePolicy>,
  position: number,
  conditions: ConditionRegistry,
  issues: ConfigIssue[],
): void {
  const { spec } = entry.resource
  const match: ConditionValues = spec.rules[position]?.match ?? {}
  for (const condition of conditions) {
    const value = match[condition.key]
    if (value === undefined || condition.references === undefined) continue
    for (const { path, kind, name } of condition.references(value)) {
      const at = ['spec', 'rules', position, 'match', condition.key, ...path]
      if (kind === 'Tenant') {
        if (spec.tenants.some((tenant) => tenant.name === name)) continue
        issues.push({
          resource: entry.index,
          path: at,
          reason: 'NotFound',
          message: `tenant "${name}" is not a tenant of this policy`,
        })
      } else if (!lookup(index, kind, entry.namespace, name)) {
        issues.push(notFound(entry, at, kind, name))
      }
    }
  }
}

function checkActionBackends(
  index: ResourceIndex,
  entry: Indexed<InferencePolicy>,
  position: number,
  issues: ConfigIssue[],
): void {
  const { action } = entry.resource.spec.rules[position] ?? {}
  if (!action) return
  const kind = Object.keys(action).find((key) => action[key as keyof typeof action] !== undefined)
  const lists: Record<string, { names: readonly string[]; locality?: 'InCluster' | 'External' }> =
    {}
  if (action.route) {
    lists.backends = { names: action.route.backends }
    if (action.route.fallback) lists.fallback = { names: action.route.fallback }
  }
  if (action.burst) {
    lists.local = { names: action.burst.local, locality: 'InCluster' }
    lists.external = { names: action.burst.external, locality: 'External' }
  }
  if (action.preferCheaper) lists.backends = { names: action.preferCheaper.backends }
  if (action.deferUntilIdle)
    lists.backends = { names: action.deferUntilIdle.backends, locality: 'InCluster' }
  for (const [field, { names, locality }] of Object.entries(lists)) {
    names.forEach((name, n) => {
      const path = ['spec', 'rules', position, 'action', kind ?? '', field, n]
      const backend = lookup(index, 'GatewayBackend', entry.namespace, name)
      if (!backend) {
        issues.push(notFound(entry, path, 'GatewayBackend', name))
        return
      }
      const actual = backendLocality(backend.resource.spec)
      if (locality !== undefined && actual !== locality) {
        issues.push({
          resource: entry.index,
          path,
          reason: 'Invalid',
          message: `GatewayBackend "${name}" is ${actual}, but ${kind}.${field} needs ${locality} backends`,
        })
      }
    })
  }
}

/**
 * A rule that only ever sees requests a locality constraint covers must be able to serve
 * them in place: with no in-cluster backend, or with a fallback that is all external,
 * the rule would fail closed on every request (or on every saturation) by construction.
 */
function checkLocality(
  index: ResourceIndex,
  entry: Indexed<InferencePolicy>,
  issues: ConfigIssue[],
): void {
  const { spec } = entry.resource
  for (const constraint of spec.constraints ?? []) {
    spec.rules.forEach((rule, position) => {
      if (!matchRequiresAnyLabel(rule.match, constraint.labels) || !isTerminalAction(rule.action))
        return
      const external = (name: string) => {
        const backend = lookup(index, 'GatewayBackend', entry.namespace, name)
        return backend !== undefined && backendLocality(backend.resource.spec) === 'External'
      }
      const fail = (path: (string | number)[], message: string) =>
        issues.push({
          resource: entry.index,
          path: ['spec', 'rules', position, 'action', ...path],
          reason: 'LocalityViolation',
          message: `rule "${rule.name}" is bound by constraint "${constraint.name}" (${constraint.locality}): ${message}`,
        })
      const { route, burst } = rule.action
      const primary = route?.backends ?? burst?.local ?? actionBackends(rule.action)
      if (primary.length > 0 && primary.every(external)) {
        fail([], 'every backend is external, so each request would be refused')
      }
      const fallback = route?.fallback ?? burst?.external
      if (fallback?.every(external) === true) {
        const field = route ? ['route', 'fallback'] : ['burst', 'external']
        fail(
          field,
          'its only fallback is external, so it can never be used and saturation fails closed; give it an in-cluster fallback or remove it',
        )
      }
    })
  }
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
