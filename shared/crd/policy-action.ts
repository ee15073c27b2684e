import { z } from 'zod'
import { ConverseUnhonouredField } from '../bedrock/converse-capabilities.ts'
import { ModelName } from './inference-pool.ts'
import { exactlyOneOf } from './named-list.ts'
import { ResourceName } from './object-meta.ts'

const backendList = (description: string, min = 1) =>
  z.array(ResourceName).min(min).max(16).describe(description)

export const RouteAction = z.strictObject({
  backends: backendList(
    'GatewayBackends to choose from; the one with the lowest predicted TTFT wins.',
  ),
  fallback: backendList(
    'Tried, in order, when every backend is saturated or unreachable.',
  ).optional(),
})

export const RejectAction = z.strictObject({
  status: z.int().min(400).max(599).describe('HTTP status of the error answer, e.g. 403 or 413.'),
  message: z.string().min(1).max(1_024).describe('Message of the OpenAI-shaped error.'),
  code: z
    .string()
    .max(64)
    .regex(/^[a-z0-9_]*$/)
    .optional()
    .describe('error.code of the answer; default policy_rejected.'),
})

export const RewriteModelAction = z.strictObject({
  model: ModelName.describe(
    'Model the request is rewritten to (an alias); evaluation continues with the rules after this one.',
  ),
})

export const BurstAction = z.strictObject({
  local: backendList('In-cluster backends used while the pool is not saturated.'),
  external: backendList(
    'External backends the request bursts to when local capacity is saturated.',
  ),
  whenSaturationAbove: z
    .number()
    .min(0)
    .default(1)
    .describe('Burst when the local pool’s saturation reaches this (1 = saturated).'),
  whenPredictedTtftAboveMs: z
    .number()
    .positive()
    .optional()
    .describe('Also burst when the best local pod’s predicted TTFT exceeds this.'),
  dropFields: z
    .array(ConverseUnhonouredField)
    .max(32)
    .optional()
    .describe(
      'Request fields an external backend cannot honour (Bedrock: n above 1, logprobs, seed, a response_format other than text, reasoning_effort, parallel_tool_calls false, penalties, logit_bias and vLLM-only sampling options; the values allowed here) that a burst may drop. A request setting such a field not listed is never burst: it waits for the local backends. Omitted: none is dropped.',
    ),
})

export const PreferCheaperAction = z.strictObject({
  backends: backendList(
    'Candidates. The cheapest (lowest relativeCost) wins unless a costlier one is predicted faster by more than ttftAdvantageMs, e.g. because its pods hold the prompt’s prefix.',
    2,
  ),
  ttftAdvantageMs: z
    .number()
    .min(0)
    .default(0)
    .describe('How much faster a costlier backend must be predicted to be chosen.'),
})

export const DeferUntilIdleAction = z.strictObject({
  backends: backendList('Backends the deferred work runs on.'),
  maxSaturation: z
    .number()
    .min(0)
    .max(1)
    .default(0.5)
    .describe('Work is admitted only while the pool’s saturation is at most this.'),
  maxWaitMs: z
    .int()
    .min(0)
    .max(600_000)
    .default(0)
    .describe('How long a request may wait for the pool to become idle; 0 answers 429 at once.'),
  retryAfterSeconds: z
    .int()
    .min(1)
    .max(3_600)
    .default(30)
    .describe('Retry-After sent with the 429 when the pool stays busy.'),
})

export const RuleAction = exactlyOneOf({
  route: RouteAction.optional().describe(
    'Send to the fastest of the backends, falling back in order.',
  ),
  reject: RejectAction.optional().describe('Answer with an error.'),
  rewriteModel: RewriteModelAction.optional().describe(
    'Rewrite the model name (an alias) and go on.',
  ),
  burst: BurstAction.optional().describe(
    'Serve locally; burst to external backends when saturated.',
  ),
  preferCheaper: PreferCheaperAction.optional().describe(
    'Pick the cheapest backend unless a costlier one is predicted clearly faster.',
  ),
  deferUntilIdle: DeferUntilIdleAction.optional().describe(
    'Batch work: admit only while the pool is idle enough, else 429 with Retry-After.',
  ),
}).describe('What happens when the rule matches; exactly one action.')
export type RuleAction = z.infer<typeof RuleAction>

export type RuleActionKind = keyof RuleAction

/** rewriteModel changes the request and evaluation goes on; every other action ends it. */
export function isTerminalAction(action: RuleAction): boolean {
  return action.rewriteModel === undefined
}

/** Backends an action may send a request to, in the order it would try them. */
export function actionBackends(action: RuleAction): string[] {
  if (action.route) return [...action.route.backends, ...(action.route.fallback ?? [])]
  if (action.burst) return [...action.burst.local, ...action.burst.external]
  if (action.preferCheaper) return action.preferCheaper.backends
  if (action.deferUntilIdle) return action.deferUntilIdle.backends
  return []
}
