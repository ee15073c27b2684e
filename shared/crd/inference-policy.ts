import { z } from 'zod'
import { VllmOnlyField } from '../openai/vllm-only-fields.ts'
import { CustomPiiPattern, maxCustomPatterns } from '../pii/custom-pii-patterns.ts'
import { builtinConditions } from '../policy/conditions/builtin-conditions.ts'
import type { ConditionRegistry } from '../policy/conditions/policy-condition.ts'
import { CommonStatus } from './condition.ts'
import { ModelPattern } from './inference-pool.ts'
import { namedList } from './named-list.ts'
import { ResourceName } from './object-meta.ts'
import { RuleAction } from './policy-action.ts'
import { RequestLabel, ruleMatchSchema } from './policy-match.ts'
import { burstsWhenUnattainable, ServiceLevel } from './service-level.ts'

/** One API key of a tenant: the <id> of `kinf_<id>_<secret>` and SHA-256 of the secret. */
export const ApiKeyRef = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z0-9]{4,32}$/, 'must be 4 to 32 lower-case letters or digits')
    .describe('The <id> part of a key kinf_<id>_<secret>; identifies the key in logs.'),
  sha256: z
    .string()
    .regex(/^[a-f0-9]{64}$/, 'must be 64 lower-case hex digits')
    .describe('Hex SHA-256 of the <secret> part. The secret itself is never stored.'),
})
export type ApiKeyRef = z.infer<typeof ApiKeyRef>

/** What the edge does with a tenant's quota when the shared store cannot be reached. */
export const QuotaFailureMode = z.enum(['FailOpen', 'FailClose'])
export type QuotaFailureMode = z.infer<typeof QuotaFailureMode>

/**
 * Whether a tenant's answers carry the routing headers (listed in
 * shared/policy/decision-headers-visible.ts). They name pools, pods and backends and give
 * each pod's predicted TTFT and saturation: a view of the load every other tenant puts on
 * the pools.
 */
export const DecisionHeaders = z.enum(['Hidden', 'Visible'])
export type DecisionHeaders = z.infer<typeof DecisionHeaders>

const decisionHeadersDoc =
  "x-kinference-decision (policy, rule, backend, pool, pod, matched tokens, predicted TTFT), x-kinference-reason (the router's reason, with the runner-up pod's predicted TTFT), x-kinference-fallback (backends passed over and why: saturated, unreachable), x-kinference-saturated and the simulator's x-kinference-sim-* timings. They show the pools' load, so the load of every tenant sharing them. Hidden: the edge removes them from this tenant's answers. Visible: they pass, for debugging and demos."

export const Tenant = z.strictObject({
  name: ResourceName.describe('Tenant name, unique across all policies.'),
  apiKeys: z
    .array(ApiKeyRef)
    .min(1)
    .max(32)
    .describe('Keys that authenticate as this tenant (several, so keys can be rotated).'),
  quotas: z
    .strictObject({
      requestsPerMinute: z.int().positive().optional().describe('Requests admitted per minute.'),
      tokensPerMinute: z
        .int()
        .positive()
        .optional()
        .describe(
          'Prompt plus output tokens per minute: admitted on prompt + max_tokens, settled on usage.',
        ),
      failureMode: QuotaFailureMode.default('FailOpen').describe(
        "When the shared quota store (Redis, the Durable Object) cannot be reached. FailOpen: admit against a bucket local to each edge process or isolate, with the same limits (so each replica still enforces them on its own; together they may admit up to replicas x the limits). FailClose: answer 503 with Retry-After. FailOpen is the default, as in Envoy's rate-limit filter and Kong: an outage of the ledger should not become an outage of the gateway.",
      ),
    })
    .optional()
    .describe('Per-tenant limits; unlimited when omitted.'),
  prefixCache: z
    .strictObject({
      sharing: z
        .enum(['Isolated', 'Shared'])
        .default('Isolated')
        .describe(
          "Isolated: the edge sets vLLM's cache_salt to an HMAC of the tenant (and of the client's own cache_salt, never trusted alone) under a key derived from the edge's signing secret, so this tenant's requests reuse only its own cached prefixes and no other tenant can learn from its time to first token what it sent recently. Shared: the client's cache_salt passes through as sent, and prefixes common to several Shared tenants hit one cache. Rotating the signing secret resets every Isolated tenant's cache affinity.",
        ),
    })
    .prefault({})
    .describe(
      "Whether the pods' prefix cache is shared with other tenants. A shared cache is a timing side channel between tenants; Isolated is the default.",
    ),
  decisionHeaders: DecisionHeaders.optional().describe(
    `Whether this tenant's answers carry the routing headers; when omitted, the policy's spec.decisionHeaders. ${decisionHeadersDoc}`,
  ),
  models: z
    .array(ModelPattern)
    .min(1)
    .max(64)
    .describe('Model names this tenant may request, aliases included; "*" allows any.'),
  vllmFields: z
    .array(VllmOnlyField)
    .max(16)
    .optional()
    .describe(
      "vLLM-only request fields this tenant's requests may carry to the pods: priority (vLLM's scheduling order: a tenant setting it can jump the queue of every tenant sharing the pool), kv_transfer_params, vllm_xargs, request_id, logits_processors, chat_template, mm_processor_kwargs. A request setting one not listed is refused with 400 (priority 0 counts as unset). Omitted: none.",
    ),
})
export type Tenant = z.infer<typeof Tenant>

/** A rule whose match holds the conditions of the registry. */
export function policyRuleSchema<const Conditions extends ConditionRegistry>(
  conditions: Conditions,
) {
  return z
    .strictObject({
      name: ResourceName.describe('Rule name, shown in decision headers and traces.'),
      // An omitted match has every condition omitted, which every registry's schema accepts.
      match: ruleMatchSchema(conditions).prefault({} as never),
      action: RuleAction,
      serviceLevel: ServiceLevel.optional().describe(
        "The TTFT objective of the requests this rule serves (or the client's, where allowHeader), checked against the best local pod's predicted TTFT, and what happens when no pod is predicted to meet it. Omitted: no objective, requests are served as the action decides.",
      ),
    })
    .superRefine((rule, ctx) => {
      if (burstsWhenUnattainable(rule.serviceLevel) && rule.action.burst === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['serviceLevel', 'whenUnattainable'],
          message: `whenUnattainable ${rule.serviceLevel?.whenUnattainable} needs a burst action (its external backends)`,
        })
    })
    .meta({
      'x-kubernetes-validations': [
        {
          rule: "!has(self.serviceLevel) || !(self.serviceLevel.whenUnattainable in ['Burst', 'BurstOrShed']) || has(self.action.burst)",
          message: 'serviceLevel.whenUnattainable Burst and BurstOrShed need a burst action',
        },
      ],
    })
}

export const PolicyRule = policyRuleSchema(builtinConditions)
export type PolicyRule = z.infer<typeof PolicyRule>

export const LocalityConstraint = z.strictObject({
  name: ResourceName.describe('Constraint name, shown when it rejects a request.'),
  labels: z
    .array(RequestLabel)
    .min(1)
    .max(32)
    .describe('The constraint applies to requests carrying any of these labels.'),
  locality: z.enum(['InCluster']).describe('Where such requests may be served.'),
  message: z
    .string()
    .max(1_024)
    .optional()
    .describe(
      'Added to the refusal sent when no allowed backend can serve the request; the refusal itself names the constraint, why it applies and whether retrying can help (400 when no in-cluster backend serves the model, 503 with Retry-After when they are busy).',
    ),
})
export type LocalityConstraint = z.infer<typeof LocalityConstraint>

/** A policy's spec whose rules match on the conditions of the registry. */
export function inferencePolicySpecSchema<const Conditions extends ConditionRegistry>(
  conditions: Conditions,
) {
  return z.strictObject({
    tenants: namedList(Tenant, { max: 256 }).describe('Tenants governed by this policy.'),
    decisionHeaders: DecisionHeaders.default('Hidden').describe(
      `Whether answers carry the routing headers, for every tenant of this policy that does not set its own decisionHeaders. Hidden is the default. ${decisionHeadersDoc}`,
    ),
    rules: namedList(policyRuleSchema(conditions), { min: 1, max: 64 }).describe(
      'Evaluated in order; the first matching rule decides (rewriteModel rewrites and goes on). A request no rule matches is rejected with 404.',
    ),
    constraints: namedList(LocalityConstraint, { max: 16 })
      .optional()
      .describe(
        'Checked after whichever rule fired, and fail closed: a labelled request is never sent outside its locality, not on saturation, not on error. Detector failures count as the label.',
      ),
    pii: z
      .strictObject({
        patterns: namedList(CustomPiiPattern, { max: maxCustomPatterns }).describe(
          'Patterns for PII the built-in detectors do not know (employee ids, record numbers).',
        ),
      })
      .optional()
      .describe(
        'PII detection beyond the built-in detectors (e-mail, phone, card, IBAN, SSN, IP, secrets).',
      ),
  })
}

export const InferencePolicySpec = inferencePolicySpecSchema(builtinConditions)
export type InferencePolicySpec = z.infer<typeof InferencePolicySpec>

export const InferencePolicyStatus = CommonStatus.extend({
  tenants: z.int().min(0).optional().describe('Tenants accepted.'),
  rules: z.int().min(0).optional().describe('Rules accepted.'),
})
export type InferencePolicyStatus = z.infer<typeof InferencePolicyStatus>
