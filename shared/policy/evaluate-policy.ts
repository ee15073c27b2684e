import type { ConfigSnapshot, SnapshotPolicy } from '../config/config-snapshot.ts'
import type { PolicyRule } from '../crd/inference-policy.ts'
import { applyConstraints } from './apply-constraints.ts'
import { applyServiceLevel } from './apply-service-level.ts'
import { type ActionOutcome, chooseTargets } from './choose-targets.ts'
import { builtinConditions } from './conditions/builtin-conditions.ts'
import type { ConditionRegistry } from './conditions/policy-condition.ts'
import { modelAllowed } from './find-tenant.ts'
import { type InterpretedRequest, interpretRequest } from './interpret-request.ts'
import { localityRefusal } from './locality-refusal.ts'
import { matchStatusConditions } from './match-rule.ts'
import type { PolicyDecision, PolicyInput, TraceStep } from './policy-decision.ts'

/**
 * Decides what happens to one request: the tenant's policy rules in order (rewriteModel
 * renames and goes on, the first other match decides), then the locality constraints
 * on whatever the rule chose. Pure: pool status comes in through `input.poolStatus`. For a
 * request read once already (its pools asked), decidePolicy takes the reading.
 */
export function evaluatePolicy(
  snapshot: ConfigSnapshot,
  input: PolicyInput,
  conditions: ConditionRegistry = builtinConditions,
): PolicyDecision {
  return decidePolicy(interpretRequest(snapshot, input.request, conditions), input.poolStatus)
}

/**
 * evaluatePolicy on a request's reading (interpret-request.ts): its request conditions as
 * tested there, only the rules' status conditions against `poolStatus`.
 */
export function decidePolicy(
  interpreted: InterpretedRequest,
  poolStatus: PolicyInput['poolStatus'],
): PolicyDecision {
  const { snapshot, request, governing, labels } = interpreted
  if (governing === null) {
    return reject(null, null, 401, 'unauthorized', `Unknown tenant "${request.tenant}".`, [])
  }
  const { policyId, policy, tenant } = governing
  if (!modelAllowed(tenant, request.model)) {
    return reject(policyId, null, 404, 'model_not_found', modelNotFound(request.model), [])
  }
  const trace: TraceStep[] = []
  let model = request.model
  for (const [index, rule] of policy.spec.rules.entries()) {
    const tested = interpreted.requestConditions(index, model)
    const result = matchStatusConditions(
      tested,
      rule.match,
      policy.namespace,
      poolStatus,
      interpreted.conditions,
    )
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
    const outcome = applyServiceLevel(
      rule.serviceLevel,
      request.sloTtftMs,
      chooseTargets(rule.action, snapshot, policy.namespace, poolStatus),
      poolStatus,
    )
    trace.push({ rule: rule.name, outcome: 'matched', why: `${conditions}; ${outcome.reason}` })
    return decide(policyId, policy, rule, model, outcome, labels, request.detectorFailed, trace)
  }
  // In OpenAI's words: which rules were passed over is the trace's (kinfctl explain), not
  // the client's to read.
  return reject(policyId, null, 404, 'model_not_found', modelNotFound(request.model), trace)
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
    const { status, code, message, retryAfterSeconds } = outcome
    return reject(policyId, rule.name, status, code, message, trace, retryAfterSeconds)
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
  const shed = outcome.kind === 'serve' ? outcome.shedIfHeldLocal : undefined
  if (shed && !constrained.attempts.some((a) => a.locality === 'External')) {
    // BurstOrShed: the objective is missed and the request may not leave the cluster.
    trace.push({
      rule: rule.name,
      outcome: 'constraint',
      why: 'serviceLevel BurstOrShed: no external attempt left, shed',
    })
    const { status, code, message, retryAfterSeconds } = shed
    return reject(policyId, rule.name, status, code, message, trace, retryAfterSeconds)
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

function reject(
  policy: string | null,
  rule: string | null,
  status: number,
  code: string,
  message: string,
  trace: TraceStep[],
  retryAfterSeconds?: number,
): PolicyDecision {
  const retry = retryAfterSeconds === undefined ? {} : { retryAfterSeconds }
  return { kind: 'reject', policy, rule, status, code, message, ...retry, trace }
}

/** OpenAI's message for a model the tenant cannot use (model_not_found). */
export function modelNotFound(model: string): string {
  return `The model \`${model}\` does not exist or you do not have access to it.`
}
