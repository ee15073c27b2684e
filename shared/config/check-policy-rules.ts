import { backendLocality } from '../crd/gateway-backend.ts'
import { actionBackends, isTerminalAction } from '../crd/policy-action.ts'
import type { InferencePolicy } from '../crd/resource.ts'
import type { ConditionRegistry } from '../policy/conditions/policy-condition.ts'
import type { ConditionValues } from '../policy/match-rule.ts'
import type { ConfigIssue } from './config-issue.ts'
import { type Indexed, lookup, notFound, type ResourceIndex } from './resource-index.ts'
import { matchRequiresAnyLabel, ruleCovers } from './rule-covers.ts'

/**
 * A policy's rules: the names their conditions refer to exist, their actions' backends
 * exist and have the locality the action needs, no rule is shadowed by an earlier terminal
 * one (each condition's own coverage), and no rule fails every request a locality
 * constraint binds it to.
 */
export function checkPolicyRules(
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
