import { randomBytes } from 'node:crypto'
import type { Tracer } from '@opentelemetry/api'
import type { ConfigSnapshot } from '../../../../shared/config/config-snapshot.ts'
import type { KinferenceResource } from '../../../../shared/crd/resource.ts'
import { estimatePromptTokens } from '../../../../shared/openai/estimate-prompt-tokens.ts'
import { detectPii } from '../../../../shared/pii/detect-pii.ts'
import type { Plugins } from '../../../../shared/plugins.ts'
import { evaluatePolicy } from '../../../../shared/policy/evaluate-policy.ts'
import { interpretRequest } from '../../../../shared/policy/interpret-request.ts'
import { kinferenceHeaders } from '../../../../shared/protocol/kinference-headers.ts'
import { createMemoryQuotaStore } from '../../../../shared/quota/memory-quota-store.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import { promptTokensHeader } from '../../../../shared/scorer-api/route-protocol.ts'
import { mintApiKey, sha256HexOf } from '../../../../shared/tenancy/api-key.ts'
import { resolveTenant } from '../../../../shared/tenancy/resolve-tenant.ts'
import { createEdgeApp } from '../../../../workers/app/edge-app.ts'
import { createEdgeMetrics } from '../../../../workers/app/edge-metrics.ts'
import { createScorerClient } from '../../../../workers/app/scorer-client.ts'
import { demoSnapshot } from '../../embedded/demo-snapshot.ts'

export interface PhaseTimes {
  p50Ms: number
  p99Ms: number
}

export interface EdgeCpuResult {
  promptBytes: number
  requests: number
  /** The whole request in the edge, with a scorer that answers at once. */
  request: PhaseTimes
  /** CPU time (user + system) per request over the same run. */
  cpuPerRequestMs: number
  /** Pools the request's policy depends on (the scorer is asked about them). */
  statusPools: number
  /** Calls to the scorer per request: each is a network round trip in a cluster. */
  scorerCallsPerRequest: number
  /**
   * What decided the warm-up requests, counted: `rule -> backend` as x-kinference-decision
   * names them when the edge decided; `scorer` when the scorer decided and served (the
   * stand-in here names no rule).
   */
  decisions: Record<string, number>
  auth: PhaseTimes
  quota: PhaseTimes
  pii: PhaseTimes
  policy: PhaseTimes
}

/** Words, numbers and a few identifiers, like a long chat prompt; seeded. */
function promptOf(bytes: number, seed: number): string {
  const random = createSeededRandom(seed)
  const words = [
    'the',
    'cache',
    'router',
    'pool',
    'latency',
    'policy',
    'request',
    'token',
    'model',
    'prefix',
    'queue',
    'tenant',
    'budget',
    'answer',
    'question',
    'order',
    'invoice',
    'review',
  ]
  const parts: string[] = []
  let size = 0
  while (size < bytes) {
    const r = random()
    const word =
      r < 0.01
        ? `call me at +1 415 555 ${String(Math.floor(random() * 9000) + 1000)}`
        : r < 0.02
          ? `version 2.${Math.floor(random() * 40)}.${Math.floor(random() * 9)}`
          : (words[Math.floor(random() * words.length)] as string)
    parts.push(word)
    size += word.length + 1
  }
  return parts.join(' ').slice(0, bytes)
}

const percentile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0

function summarize(samples: number[]): PhaseTimes {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) }
}

const completion = JSON.stringify({
  id: 'x',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 8000, completion_tokens: 1, total_tokens: 8001 },
})

/**
 * The network under the edge's real scorer client: a scorer that answers at once, so the
 * edge's own work is what is timed, signing every body included. Counts the calls.
 */
function instantScorerFetch() {
  const counts = { calls: 0 }
  const fetch = async (_input: string | URL | Request): Promise<Response> => {
    counts.calls++
    return new Response(completion, {
      headers: { 'content-type': 'application/json', [promptTokensHeader]: '8000' },
    })
  }
  return { fetch: fetch as typeof globalThis.fetch, counts }
}

/** `rule -> backend` of an answer's x-kinference-decision; `scorer` when it names no rule. */
function decidedBy(response: Response): string {
  const header = response.headers.get(kinferenceHeaders.decision) ?? ''
  const rule = /(?:^|; )rule=([^;]*)/.exec(header)?.[1]
  const backend = /(?:^|; )backend=([^;]*)/.exec(header)?.[1]
  return rule === undefined ? 'scorer' : `${rule} -> ${backend}`
}

/**
 * The edge's CPU time per request on a long prompt: the whole Hono handler (auth, body
 * parse, PII, quota, policy, response) against an upstream that answers at once, and each
 * phase on its own. Over the demo policy, or what `patch` makes of the demo resources with
 * `plugins`' strategies and conditions (the built-in ones when absent), which the edge then
 * runs with.
 */
export async function measureEdgeCpu(options: {
  promptBytes: number
  requests: number
  seed: number
  patch?: (resource: KinferenceResource) => void
  plugins?: Plugins
  /** Each request traced (its server span and stage spans) with this tracer. */
  tracer?: Tracer
}): Promise<EdgeCpuResult> {
  const { plugins } = options
  const key = mintApiKey((n) => randomBytes(n), { id: 'demo' })
  const snapshot: ConfigSnapshot = await demoSnapshot(
    'http://127.0.0.1:1',
    key.id,
    await sha256HexOf(key.secret),
    // Quotas are checked on every request but never refuse one here.
    (resource) => {
      if (resource.kind === 'InferencePolicy')
        for (const tenant of resource.spec.tenants)
          tenant.quotas = {
            requestsPerMinute: 1_000_000_000,
            tokensPerMinute: 1_000_000_000,
            failureMode: 'FailOpen',
          }
      options.patch?.(resource)
    },
    plugins,
  )
  const quotas = createMemoryQuotaStore()
  const prompt = promptOf(options.promptBytes, options.seed)
  const policyRequest = {
    tenant: 'demo',
    model: 'qwen3.8-27b-fp8',
    promptTokens: estimatePromptTokens(prompt),
    labels: [],
    detectorFailed: false,
  }
  const network = instantScorerFetch()
  const scorer = createScorerClient({
    urls: ['http://scorer.invalid'],
    signingSecret: 'bench-signing-secret-0123456789',
    nowSeconds: () => Date.now() / 1000,
    fetch: network.fetch,
  })
  const app = createEdgeApp({
    config: async () => snapshot,
    quotas,
    scorer,
    external: {
      complete: () => Promise.reject(new Error('not used: the pool is never saturated here')),
      countTokens: async () => null,
    },
    metrics: createEdgeMetrics(),
    nowMs: () => performance.now(),
    sleep: async () => {},
    newRequestId: () => 'bench',
    log: () => {},
    ...(plugins && { plugins }),
    ...(options.tracer && { tracer: options.tracer }),
  })
  const body = JSON.stringify({
    model: 'qwen3.8-27b-fp8',
    messages: [{ role: 'user', content: prompt }],
    max_tokens: 64,
  })
  const send = async () => {
    const response = await app.fetch(
      new Request('http://edge/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body,
      }),
    )
    if (response.status !== 200) throw new Error(`edge answered ${response.status}`)
    await response.text()
    return response
  }
  const decisions: Record<string, number> = {}
  for (let i = 0; i < 200; i++) {
    const decided = decidedBy(await send())
    decisions[decided] = (decisions[decided] ?? 0) + 1
  }
  const request: number[] = []
  const callsBefore = network.counts.calls
  const cpuBefore = process.cpuUsage()
  for (let i = 0; i < options.requests; i++) {
    const started = performance.now()
    await send()
    request.push(performance.now() - started)
  }
  const cpu = process.cpuUsage(cpuBefore)
  const scorerCallsPerRequest = (network.counts.calls - callsBefore) / options.requests
  const time = async (fn: () => unknown) => {
    const samples: number[] = []
    for (let i = 0; i < options.requests; i++) {
      const started = performance.now()
      await fn()
      samples.push(performance.now() - started)
    }
    return summarize(samples)
  }
  return {
    promptBytes: prompt.length,
    requests: options.requests,
    request: summarize(request),
    cpuPerRequestMs: (cpu.user + cpu.system) / 1000 / options.requests,
    statusPools: interpretRequest(snapshot, policyRequest, plugins?.conditions).pools.length,
    scorerCallsPerRequest,
    decisions,
    auth: await time(() => resolveTenant(snapshot, key.key)),
    quota: await time(() =>
      quotas.admit('bench', { requestsPerMinute: 1e9 }, 9000, performance.now()),
    ),
    pii: await time(() => detectPii(prompt)),
    policy: await time(() =>
      evaluatePolicy(
        snapshot,
        {
          request: policyRequest,
          poolStatus: () => ({ saturation: 0.2, saturated: false, predictedTtftMs: 120 }),
        },
        plugins?.conditions,
      ),
    ),
  }
}
