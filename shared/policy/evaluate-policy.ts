import type { ConfigSnapshot, SnapshotPolicy } from '../config/config-snapshot.ts'
import type { PolicyRule, Tenant } from '../crd/inference-policy.ts'
import { applyConstraints } from './apply-constraints.ts'
import { type ActionOutcome, chooseTargets } from './choose-targets.ts'
import { effectiveLabels } from './effective-labels.ts'
import { localityRefusal } from './locality-refusal.ts'
import { matchRule } from './match-rule.ts'
import type { PolicyDecision, PolicyInput, TraceStep } from './policy-decision.ts'

/**
 * Decides what happens to one request: the tenant's policy rules in order (rewriteModel
 * renames and goes on, the first other match decides), then the locality constraints
 * on whatever the rule chose. Pure: pool status comes in through `input.poolStatus`.
 */
export function evaluatePolicy(snapshot: ConfigSnapshot, input: PolicyInput): PolicyDecision {
  const { request } = input
  const governing = findTenant(snapshot, request.tenant)
  if (governing === null) {
    return reject(null, null, 401, 'unauthorized', `Unknown tenant "${request.tenant}".`, [])
  }
  const { policyId, policy, tenant } = governing
  if (!modelAllowed(tenant, request.model)) {
    return reject(
      policyId,
      null,
      404,
      'model_not_found',
      `The model \`${request.model}\` does not exist or you do not have access to it.`,
      [],
    )
  }
  const labels = effectiveLabels(policy.spec, request)
  const trace: TraceStep[] = []
  let model = request.model
  for (const rule of policy.spec.rules) {
    const subject = { tenant: request.tenant, model, promptTokens: request.promptTokens, labels }
    const result = matchRule(rule.match, policy.namespace, subject, input.poolStatus)
    if (!result.holds) {
      trace.push({ rule: rule.name, outcome: 'skipped', why: result.why })
      continue
    }
    const conditions = result.why.length > 0 ? result.why.join(', ') : 'no conditions'
    if (rule.action.rewriteModel) {
      const to = rule.action.rewriteModel.model
      trace.push({
        rule: rule.name,
        outcome: 'rewrote',
        why: `${conditions}: rewrote model ${model} -> ${to}`,
      })
      // Rules run once each, in order, so a chain of rewrites cannot loop.
      model = to
      continue
    }
    const outcome = chooseTargets(rule.action, snapshot, policy.namespace, input.poolStatus)
    trace.push({ rule: rule.name, outcome: 'matched', why: `${conditions}; ${outcome.reason}` })
    return decide(policyId, policy, rule, model, outcome, labels, request.detectorFailed, trace)
  }
  return reject(
    policyId,
    null,
    404,
    'no_matching_rule',
    `No rule of policy ${policyId} serves model \`${model}\` for tenant ${request.tenant}.`,
    trace,
  )
}

function decide(
  policyId: string,
  policy: SnapshotPolicy,
  rule: PolicyRule,
  model: string,
  outcome: ActionOutcome,
  labels: ReadonlySet<string>,
  detectorFailed: boolean,
  trace: TraceStep[],
): PolicyDecision {
  if (outcome.kind === 'reject') {
    return reject(policyId, rule.name, outcome.status, outcome.code, outcome.message, trace)
  }
  const constrained = applyConstraints(
    policy.spec.constraints ?? [],
    outcome.attempts,
    labels,
    detectorFailed,
  )
  trace.push(...constrained.steps)
  if (constrained.violated !== null) {
    // Every attempt the rule names is outside the cluster: no wait changes that.
    const refusal = localityRefusal({
      constraint: constrained.violated,
      model,
      labels: [...labels],
      detectorFailed,
      busy: null,
    })
    return reject(policyId, rule.name, refusal.status, 'locality_violation', refusal.message, trace)
  }
  if (outcome.kind === 'defer') {
    const { pools, maxSaturation, maxWaitMs, retryAfterSeconds } = outcome
    return {
      kind: 'defer',
      policy: policyId,
      rule: rule.name,
      retryAfterSeconds,
      maxWaitMs,
      pools,
      maxSaturation,
      trace,
    }
  }
  const removed = outcome.attempts.length - constrained.attempts.length
  const constraintNote =
    removed > 0 ? `; locality constraints removed ${removed} external attempt(s)` : ''
  return {
    kind: 'serve',
    policy: policyId,
    rule: rule.name,
    model,
    attempts: constrained.attempts,
    reason: `rule ${rule.name}: ${outcome.reason}${constraintNote}`,
    trace,
  }
}

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

function reject(
  policy: string | null,
  rule: string | null,
  status: number,
  code: string,
  message: string,
  trace: TraceStep[],
): PolicyDecision {
  return { kind: 'reject', policy, rule, status, code, message, trace }
}
