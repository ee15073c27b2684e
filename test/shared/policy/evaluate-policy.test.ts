import { beforeAll, describe, expect, it } from 'vitest'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { evaluatePolicy } from '../../../shared/policy/evaluate-policy.ts'
import type {
  PolicyDecision,
  PolicyInput,
  PolicyRequest,
} from '../../../shared/policy/policy-decision.ts'
import { exampleSnapshot, request, statuses } from './example-snapshot.ts'

let snapshot: ConfigSnapshot
beforeAll(async () => {
  snapshot = await exampleSnapshot()
})

const evaluate = (req: PolicyRequest, poolStatus: PolicyInput['poolStatus'] = statuses()) =>
  evaluatePolicy(snapshot, { request: req, poolStatus })

function served(decision: PolicyDecision) {
  if (decision.kind !== 'serve') throw new Error(`expected serve, got ${JSON.stringify(decision)}`)
  return decision
}
const backends = (decision: PolicyDecision) => served(decision).attempts.map((a) => a.backend)
const why = (decision: PolicyDecision, rule: string) =>
  decision.trace.find((step) => step.rule === rule)?.why

describe('simple to cheaper (acme-support)', () => {
  const chat = (promptTokens = 300) => request('acme-support', 'chat', { promptTokens })

  it('sends a short chat to the cheap backend when the big one is not clearly faster', () => {
    const decision = evaluate(
      chat(),
      statuses({ 'qwen-8b': { predictedTtftMs: 400 }, 'qwen-27b': { predictedTtftMs: 300 } }),
    )
    expect(served(decision).rule).toBe('short-chat-prefers-cheap')
    expect(backends(decision)).toEqual(['kinference/qwen-8b-local', 'kinference/qwen-27b-local'])
    expect(served(decision).reason).toMatch(/qwen-27b-local predicted 100 ms faster \(<= 150 ms\)/)
  })

  it('picks the 27B backend when its predicted TTFT is far lower (prefix in cache)', () => {
    const decision = evaluate(
      chat(),
      statuses({ 'qwen-8b': { predictedTtftMs: 900 }, 'qwen-27b': { predictedTtftMs: 120 } }),
    )
    expect(backends(decision)).toEqual(['kinference/qwen-27b-local', 'kinference/qwen-8b-local'])
    expect(served(decision).attempts[0]).toEqual({
      backend: 'kinference/qwen-27b-local',
      locality: 'InCluster',
      pool: 'kinference/qwen-27b',
      model: 'qwen3.8-27b-fp8',
    })
    expect(served(decision).model).toBe('chat')
    expect(served(decision).reason).toMatch(/chose kinference\/qwen-27b-local/)
  })

  it('stays cheap when a status is unknown', () => {
    for (const poolStatus of [statuses(), statuses({ 'qwen-8b': { predictedTtftMs: 900 } })]) {
      const decision = evaluate(chat(), poolStatus)
      expect(backends(decision)).toEqual(['kinference/qwen-8b-local', 'kinference/qwen-27b-local'])
      expect(served(decision).reason).toMatch(/predicted TTFT unknown/)
    }
  })

  it('sends long chats to the 27B backend and says why the cheap rule did not fire', () => {
    const decision = evaluate(chat(3000))
    expect(served(decision).rule).toBe('long-chat-on-27b')
    expect(backends(decision)).toEqual(['kinference/qwen-27b-local'])
    expect(why(decision, 'short-chat-prefers-cheap')).toBe('promptTokens 3000 > max 2048')
  })
})

describe('burst to Bedrock (globex)', () => {
  const req = request('globex', 'qwen3.8-27b-fp8')
  const local = 'kinference/qwen-27b-local'
  const bedrock = 'kinference/bedrock-claude'

  it('serves locally first with Bedrock after when the pool keeps up', () => {
    const decision = evaluate(
      req,
      statuses({ 'qwen-27b': { saturation: 0.5, predictedTtftMs: 200 } }),
    )
    expect(backends(decision)).toEqual([local, bedrock])
    expect(served(decision).attempts[1]).toEqual({
      backend: bedrock,
      locality: 'External',
      provider: 'kinference/bedrock-us-east-1',
      model: 'claude-sonnet',
    })
  })

  it('serves locally first when the status is unknown (the edge moves on if local says saturated)', () => {
    const decision = evaluate(req)
    expect(backends(decision)).toEqual([local, bedrock])
    expect(served(decision).reason).toMatch(/status unknown/)
  })

  it('bursts first when the pool is saturated', () => {
    const decision = evaluate(
      req,
      statuses({ 'qwen-27b': { saturation: 0.95, predictedTtftMs: 200 } }),
    )
    expect(backends(decision)).toEqual([bedrock, local])
    expect(served(decision).reason).toMatch(/saturation 0\.95 >= 0\.9: external first/)
  })

  it('bursts first when the best local pod is predicted over 3 s', () => {
    const decision = evaluate(
      req,
      statuses({ 'qwen-27b': { saturation: 0.2, predictedTtftMs: 4500 } }),
    )
    expect(backends(decision)).toEqual([bedrock, local])
    expect(served(decision).reason).toMatch(/predicted TTFT 4500 ms > 3000 ms/)
  })
})

describe('PII stays local (initech-health)', () => {
  const tenant = 'initech-health'
  const model = 'qwen3.8-27b-fp8'
  const saturated = statuses({
    'qwen-27b': { saturation: 1.4, saturated: true, predictedTtftMs: 9000 },
  })

  it('bursts a request without PII when local is saturated', () => {
    const decision = evaluate(request(tenant, model), saturated)
    expect(served(decision).rule).toBe('everything-else-may-burst')
    expect(backends(decision)[0]).toBe('kinference/bedrock-claude')
    expect(why(decision, 'pii-in-cluster')).toMatch(/carries none of \[pii\]: no effect/)
  })

  it('keeps a PII request on in-cluster pools, saturated or not', () => {
    const decision = evaluate(request(tenant, model, { labels: ['pii', 'pii:card'] }), saturated)
    expect(served(decision).rule).toBe('pii-on-own-gpus')
    expect(backends(decision)).toEqual(['kinference/qwen-27b-local', 'kinference/qwen-8b-local'])
  })

  it('treats a failed detector as PII', () => {
    const decision = evaluate(request(tenant, model, { detectorFailed: true }), saturated)
    expect(served(decision).rule).toBe('pii-on-own-gpus')
    expect(served(decision).attempts.every((a) => a.locality === 'InCluster')).toBe(true)
    expect(why(decision, 'pii-in-cluster')).toMatch(/detector failed/)
  })

  it('strips Bedrock from a burst when only a qualified label (pii:card) is carried', () => {
    const decision = evaluate(request(tenant, model, { labels: ['pii:card'] }), saturated)
    expect(served(decision).rule).toBe('everything-else-may-burst')
    expect(backends(decision)).toEqual(['kinference/qwen-27b-local'])
    expect(why(decision, 'pii-on-own-gpus')).toBe('labels: none of [pii] present')
    expect(why(decision, 'pii-in-cluster')).toMatch(/removed External kinference\/bedrock-claude/)
    expect(served(decision).reason).toMatch(/removed 1 external attempt/)
  })

  it('rejects with 400 locality_violation, not to be retried, when the constraint leaves nothing', async () => {
    // A rule serving only on Bedrock, placed first, so a PII request reaches it.
    const withExternalOnly = await exampleSnapshot((documents) => {
      const policy = documents.find(
        (d) => (d as { metadata?: { name?: string } }).metadata?.name === 'pii-stays-local',
      ) as { spec: { tenants: { models: string[] }[]; rules: unknown[] } }
      policy.spec.tenants[0]?.models.push('claude-sonnet')
      policy.spec.rules.unshift({
        name: 'claude-on-bedrock',
        match: { models: ['claude-sonnet'] },
        action: { route: { backends: ['bedrock-claude'] } },
      })
    })
    const run = (labels: string[], detectorFailed = false) =>
      evaluatePolicy(withExternalOnly, {
        request: request(tenant, 'claude-sonnet', { labels, detectorFailed }),
        poolStatus: statuses(),
      })
    expect(backends(run([]))).toEqual(['kinference/bedrock-claude'])
    const cases = [
      [run(['pii']), 'it carries personal data (pii)'],
      [run(['pii:email']), 'it carries personal data (pii:email)'],
      [run([], true), 'the personal-data scan could not read all of it'],
    ] as const
    for (const [decision, reason] of cases) {
      // No wait brings a backend in the cluster for claude-sonnet: a 400, which clients
      // do not retry, naming the constraint, why it applies and that a retry is useless.
      expect(decision).toMatchObject({
        kind: 'reject',
        rule: 'claude-on-bedrock',
        status: 400,
        code: 'locality_violation',
      })
      const { message } = decision as { message: string }
      expect(message).toContain(
        `Constraint pii-in-cluster keeps this request in the cluster because ${reason}`,
      )
      expect(message).toContain(
        'model claude-sonnet is not served in the cluster, so retrying will not help',
      )
      expect(message).not.toMatch(/retry later|retry in/)
      expect(why(decision, 'pii-in-cluster')).toMatch(/nothing InCluster left to try/)
    }
  })
})

describe('batch on idle GPUs (umbrella-analytics)', () => {
  const batch = request('umbrella-analytics', 'qwen3.8-27b-fp8', { labels: ['batch'] })

  it('admits batch work while the pool is idle', () => {
    const decision = evaluate(batch, statuses({ 'qwen-27b': { saturation: 0.1 } }))
    expect(served(decision).rule).toBe('batch-waits-for-idle')
    expect(backends(decision)).toEqual(['kinference/qwen-27b-local'])
  })

  it('defers batch work while the pool is busy or its status unknown', () => {
    for (const poolStatus of [statuses({ 'qwen-27b': { saturation: 0.6 } }), statuses()]) {
      expect(evaluate(batch, poolStatus)).toMatchObject({
        kind: 'defer',
        rule: 'batch-waits-for-idle',
        retryAfterSeconds: 60,
        maxWaitMs: 0,
        pools: ['kinference/qwen-27b'],
        maxSaturation: 0.3,
      })
    }
    const busy = evaluate(batch, statuses({ 'qwen-27b': { saturation: 0.6 } }))
    expect(why(busy, 'batch-waits-for-idle')).toMatch(/saturation 0\.6 > 0\.3/)
  })

  it('routes interactive work without waiting', () => {
    const decision = evaluate(request('umbrella-analytics', 'qwen3.8-27b-fp8'))
    expect(served(decision).rule).toBe('interactive')
    expect(why(decision, 'batch-waits-for-idle')).toMatch(/labels: batch missing/)
  })
})

describe('model aliases (hooli)', () => {
  it('rewrites gpt-4o to the 27B model, then routes, and the trace shows the rewrite', () => {
    const decision = evaluate(request('hooli', 'gpt-4o'))
    expect(served(decision)).toMatchObject({ rule: 'serve-27b', model: 'qwen3.8-27b-fp8' })
    expect(decision.trace.map((step) => [step.rule, step.outcome])).toEqual([
      ['gpt-4o-is-27b', 'rewrote'],
      ['gpt-4o-mini-is-8b', 'skipped'],
      ['serve-27b', 'matched'],
    ])
    expect(why(decision, 'gpt-4o-is-27b')).toMatch(/gpt-4o -> qwen3.8-27b-fp8/)
  })

  it('rewrites gpt-4o-mini to the 8B model', () => {
    const decision = evaluate(request('hooli', 'gpt-4o-mini'))
    expect(served(decision)).toMatchObject({ rule: 'serve-8b', model: 'qwen3-8b' })
    expect(served(decision).attempts[0]?.model).toBe('qwen3-8b')
  })

  it('serves the support alias on the LoRA adapter', () => {
    const decision = evaluate(request('hooli', 'support'))
    expect(served(decision).attempts).toEqual([
      {
        backend: 'kinference/qwen-27b-support',
        locality: 'InCluster',
        pool: 'kinference/qwen-27b',
        model: 'support-tone',
      },
    ])
  })

  it('refuses the underlying name, which the tenant may not request', () => {
    expect(evaluate(request('hooli', 'qwen3.8-27b-fp8'))).toMatchObject({
      kind: 'reject',
      status: 404,
      code: 'model_not_found',
    })
  })
})

describe('tenant limits and rejection by prompt length', () => {
  it('routes the free tier to the small model', () => {
    expect(backends(evaluate(request('free-tier', 'qwen3-8b', { promptTokens: 4096 })))).toEqual([
      'kinference/qwen-8b-local',
    ])
  })

  it('rejects a free-tier prompt over 4,096 tokens with 413', () => {
    const decision = evaluate(request('free-tier', 'qwen3-8b', { promptTokens: 4097 }))
    expect(decision).toMatchObject({
      kind: 'reject',
      rule: 'free-tier-prompt-cap',
      status: 413,
      code: 'prompt_too_long_for_plan',
    })
    expect(why(decision, 'longer-than-context')).toBe('promptTokens 4097 < min 32000')
  })

  it('lets the pro tier send that prompt to the 27B model', () => {
    const decision = evaluate(request('pro-tier', 'qwen3.8-27b-fp8', { promptTokens: 9000 }))
    expect(served(decision).rule).toBe('pro-tier-27b')
    expect(why(decision, 'free-tier-prompt-cap')).toBe('tenant pro-tier not in [free-tier]')
  })

  it('rejects prompts longer than the context for everyone', () => {
    for (const tenant of ['free-tier', 'pro-tier']) {
      expect(evaluate(request(tenant, 'qwen3-8b', { promptTokens: 40_000 }))).toMatchObject({
        kind: 'reject',
        rule: 'longer-than-context',
        status: 413,
        code: 'context_length_exceeded',
      })
    }
  })

  it('refuses a model outside the tenant’s list with 404 model_not_found', () => {
    const decision = evaluate(request('free-tier', 'qwen3.8-27b-fp8'))
    expect(decision).toMatchObject({ kind: 'reject', status: 404, code: 'model_not_found' })
    expect(decision.kind === 'reject' && decision.message).toMatch(/qwen3.8-27b-fp8/)
  })

  it('rejects with 404 model_not_found, in OpenAI’s words, when "*" admits a model no rule serves', () => {
    const decision = evaluate(request('pro-tier', 'gpt-9'))
    expect(decision).toMatchObject({
      kind: 'reject',
      policy: 'kinference/tenant-limits',
      rule: null,
      status: 404,
      code: 'model_not_found',
      message: 'The model `gpt-9` does not exist or you do not have access to it.',
    })
    expect(decision.trace.map((step) => step.outcome)).toEqual(Array(5).fill('skipped'))
    expect(why(decision, 'pro-tier-27b')).toBe('model gpt-9 not in [qwen3.8-27b-fp8]')
  })

  it('rejects a tenant the snapshot does not know with 401', () => {
    for (const tenant of ['nobody', 'constructor', '__proto__']) {
      expect(evaluate(request(tenant, 'qwen3-8b'))).toMatchObject({
        kind: 'reject',
        policy: null,
        status: 401,
      })
    }
  })
})
