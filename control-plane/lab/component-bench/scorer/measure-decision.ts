import { randomUUID } from 'node:crypto'
import { Agent } from 'node:http'
import { type EdgeClaims, signEdgeRequest } from '../../../../shared/auth/edge-signature.ts'
import { createMemoryKvIndex } from '../../../../shared/kv-index/memory-kv-index.ts'
import { estimatePromptTokens } from '../../../../shared/openai/estimate-prompt-tokens.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import type { RouteResult } from '../../../../shared/routing/pool-router.ts'
import { routeEnvelope, routePaths } from '../../../../shared/scorer-api/route-protocol.ts'
import { createStableVocabulary } from '../../../../shared/tokens/create-stable-vocabulary.ts'
import { ReplayGuard } from '../../../scorer/http/replay-guard.ts'
import type { SignedRequest } from '../../../scorer/http/signed-request.ts'
import { createScorerMetrics } from '../../../scorer/metrics/scorer-metrics.ts'
import { PolicyBundleCache } from '../../../scorer/pools/policy-bundle-cache.ts'
import { PoolRuntime } from '../../../scorer/pools/pool-runtime.ts'
import { ScorerConfig } from '../../../scorer/scorer-config.ts'
import type { PoolAttempt } from '../../../scorer/serving/attempt-record.ts'
import { decidedByClaims, prepareInference } from '../../../scorer/serving/handle-inference.ts'
import { decideRoute } from '../../../scorer/serving/handle-route.ts'
import type { InferenceContext } from '../../../scorer/serving/inference-context.ts'
import { TokenizerCache } from '../../../scorer/serving/tokenizer-cache.ts'
import type { DecisionRecorder } from '../../../scorer/state/decision-recorder.ts'
import { logDecision } from '../../../scorer/state/log-decision.ts'
import {
  benchDemoPolicy,
  benchSecret,
  demoModel,
  demoPool,
  demoTenant,
} from './bench-demo-policy.ts'

export interface Percentiles {
  p50Ms: number
  p99Ms: number
}

export interface DecisionTimes {
  promptTokens: number
  pods: number
  /** One signed forward, from its bytes to the pod chosen. */
  forward: { warm: Percentiles; cold: Percentiles }
  /**
   * A request whose policy depends on the pool's status, as the edge sends it: every call
   * the scorer answers for it, from their bytes to the pod chosen.
   */
  statusDependent: { warm: Percentiles; cold: Percentiles; calls: number }
  /**
   * With a decision log: warm samples alternating with and without logging each decision
   * and its end (as serveOnPool does), so both arms share one warm process; null without.
   */
  decisionLog: {
    forward: { without: Percentiles; with: Percentiles }
    statusDependent: { without: Percentiles; with: Percentiles }
  } | null
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
}
const percentiles = (values: number[]): Percentiles => ({
  p50Ms: quantile(values, 0.5),
  p99Ms: quantile(values, 0.99),
})

const claims: EdgeClaims = { tenant: demoTenant, labels: [], backends: [], allowBurst: true }

/** What the edge sends: the body and its signature, as the scorer's server reads them. */
async function signed(
  path: string,
  body: string,
  id: string,
  extra: Partial<EdgeClaims> = {},
): Promise<SignedRequest> {
  const headers = await signEdgeRequest(
    benchSecret,
    { method: 'POST', path, body, nonce: randomUUID() },
    { ...claims, ...extra },
    Date.now() / 1000,
  )
  return {
    method: 'POST',
    path,
    headers: (name) => headers[name],
    body: Buffer.from(body),
    requestId: id,
  }
}

/**
 * The scorer's work per request minus HTTP and proxying, through its own handler code:
 * the edge's signature verified, the body parsed and tokenized (chat template), its block
 * keys looked up once over every pod, the strategy's choice; for a status-dependent policy
 * also the policy bundle and its evaluation. An ~8,000-token prompt over
 * 32 pods whose in-memory index holds parts of it. Warm: the same long system prompt with
 * a new question each time (the tokenizer's segment cache holds the system prompt). Cold:
 * a system prompt never seen. Signing is the edge's work and is done before timing.
 */
export async function measureDecision(options: {
  pods: number
  promptWords: number
  samples: number
  seed: number
  /** Where decisions are logged in the alternate warm samples; none: no such samples. */
  decisionLog?: DecisionRecorder
}): Promise<DecisionTimes> {
  const random = createSeededRandom(options.seed)
  const index = createMemoryKvIndex()
  const tokenizers = new TokenizerCache()
  const { spec, bundleJson } = await benchDemoPolicy()
  const pool = new PoolRuntime({
    name: demoPool,
    spec,
    index,
    tokenizers,
    random,
    onError: () => {},
  })
  const context: InferenceContext = {
    config: ScorerConfig.parse({
      port: 0,
      signingSecrets: [benchSecret],
      pools: [{ name: demoPool, spec }],
      pods: [],
    }),
    pools: [pool],
    backends: {},
    index,
    metrics: createScorerMetrics(() => 0),
    agent: new Agent(),
    podsReportingCache: new Set(),
    random,
    log: () => {},
    bundles: new PolicyBundleCache(),
    replica: 'bench',
    decisions: options.decisionLog ?? { record: () => {} },
    replays: new ReplayGuard(),
  }
  /** What serveOnPool logs of a decision and, once the pod answered, of its end. */
  const logged = (id: string, startedMs: number, attempt: PoolAttempt, route: RouteResult) => {
    const pod = route.decision.pod as string
    const matched = route.decision.scores.find((s) => s.pod === pod)?.cachedTokens ?? 0
    const predicted = route.predictedTtftMs.get(pod) ?? 0
    const log = logDecision(
      context,
      attempt.prepared,
      { requestId: id, startedMs, decidedBy: decidedByClaims(claims) },
      { pod, matched, predicted, heldMs: 0 },
    )
    log.firstTokenAtMs = performance.now()
    log.ended({
      kind: 'completed',
      status: 200,
      usageSeen: true,
      cachedTokens: matched,
      promptTokens: attempt.prepared.request.routing.promptTokens,
      generatedTokens: 16,
    })
  }
  const pods = Array.from({ length: options.pods }, (_, i) => `pod-${i}`)
  for (const pod of pods) {
    pool.router.addPod(pod, 0)
    pool.router.setIndexReady(pod, true)
  }
  const words = createStableVocabulary(tokenizers.require('qwen3')).words.map((w) => w.word)
  const text = (count: number) =>
    Array.from({ length: count }, () => words[Math.floor(random() * words.length)]).join(' ')
  const body = (system: string) =>
    JSON.stringify({
      model: demoModel,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: text(40) },
      ],
    })
  const system = text(options.promptWords)
  // Pods hold various prefixes of the prompt, as after real traffic.
  const seed = await prepareInference(
    context,
    'chat',
    await signed('/v1/chat/completions', body(system), 'seed'),
  )
  const { keys } = seed.attempt.prepared.request
  for (const [i, pod] of pods.entries()) {
    const blocks = Math.floor(((keys.length / 2) * (i % 4)) / 3)
    await index.addSpeculative(pod, keys, blocks, Number.MAX_SAFE_INTEGER)
  }
  const forward = async (text: string, id: string, log: boolean) => {
    const request = await signed('/v1/chat/completions', text, id)
    const started = performance.now()
    const { attempt } = await prepareInference(context, 'chat', request)
    const route = attempt.prepared.pool.router.score(attempt.lookup, performance.now())
    if (route.decision.pod === null) throw new Error('no decision')
    if (log) logged(id, started, attempt, route)
    return performance.now() - started
  }
  // One route call: the policy decided on the pool's status, the pod chosen.
  const statusDependent = async (text: string, id: string, log: boolean) => {
    // The edge sends its own estimate of the prompt's length along (its work, not timed here).
    const content = (JSON.parse(text) as { messages: { content: string }[] }).messages
    const promptTokens = estimatePromptTokens(content.map((m) => m.content).join('\n'))
    const request = await signed(routePaths.chat, routeEnvelope(bundleJson, text), id, {
      promptTokens,
    })
    const started = performance.now()
    const { decision, asked } = await decideRoute(context, 'chat', request)
    const first = decision.kind === 'serve' ? decision.attempts[0] : undefined
    const attempt = first?.pool === undefined ? undefined : asked.get(first.pool)
    if (!attempt) throw new Error(`no local attempt: ${JSON.stringify(decision)}`)
    // The score taken for the pool's status is the one its first admission uses.
    const route = attempt.scored ?? attempt.prepared.pool.router.score(attempt.lookup, 0)
    if (route.decision.pod === null) throw new Error('no decision')
    if (log) logged(id, started, attempt, route)
    return performance.now() - started
  }
  const alternate = options.decisionLog !== undefined
  const run = async (
    decide: (text: string, id: string, log: boolean) => Promise<number>,
    name: string,
  ) => {
    for (let i = 0; i < 200; i++)
      await decide(body(system), `${name}-w${i}`, alternate && i % 2 === 1)
    const warm: number[] = []
    const warmLogged: number[] = []
    for (let i = 0; i < options.samples; i++) {
      const log = alternate && i % 2 === 1
      ;(log ? warmLogged : warm).push(await decide(body(system), `${name}-${i}`, log))
    }
    const cold: number[] = []
    for (let i = 0; i < Math.min(options.samples, 200); i++)
      cold.push(await decide(body(text(options.promptWords)), `${name}-c${i}`, false))
    return {
      warm: percentiles(warm),
      cold: percentiles(cold),
      logged: { without: percentiles(warm), with: percentiles(warmLogged) },
    }
  }
  const forwardRun = await run(forward, 'forward')
  const statusRun = await run(statusDependent, 'status')
  const result: DecisionTimes = {
    promptTokens: seed.attempt.prepared.request.routing.promptTokens,
    pods: options.pods,
    forward: { warm: forwardRun.warm, cold: forwardRun.cold },
    statusDependent: { warm: statusRun.warm, cold: statusRun.cold, calls: 1 },
    decisionLog: alternate
      ? { forward: forwardRun.logged, statusDependent: statusRun.logged }
      : null,
  }
  context.agent.destroy()
  return result
}
