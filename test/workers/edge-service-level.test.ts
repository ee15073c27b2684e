import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { ServiceLevel } from '../../shared/crd/service-level.ts'
import { createMemoryQuotaStore } from '../../shared/quota/memory-quota-store.ts'
import { createEdgeApp } from '../../workers/app/edge-app.ts'
import { createEdgeMetrics } from '../../workers/app/edge-metrics.ts'
import { createExternalProviders } from '../../workers/app/external-providers.ts'
import { createScorerClient } from '../../workers/app/scorer-client.ts'
import { type RequestPathStack, startRequestPathStack } from '../support/request-path-stack.ts'

// The live path with service levels: the edge, the real scorer over simulated pods (whose
// predicted TTFT for a short prompt is some milliseconds) and the Bedrock stand-in.
let started: Awaited<ReturnType<typeof startRequestPathStack>>
beforeAll(async () => {
  started = await startRequestPathStack()
})
afterAll(() => started.close())

const card = 'My card is 4111 1111 1111 1111, please book the flight.'
const header = 'x-kinference-slo-ttft-ms'

/** The edge over the stack, the demo's burst rule given `level` (none: no service level). */
function edge(level?: Partial<ServiceLevel>) {
  const stack: RequestPathStack = started.stack
  const snapshot = JSON.parse(stack.snapshot) as ConfigSnapshot
  for (const policy of Object.values(snapshot.policies))
    for (const rule of policy.spec.rules) {
      if (rule.name !== 'local-then-bedrock') continue
      if (!level) delete rule.serviceLevel
      else
        rule.serviceLevel = {
          ttftMs: 600_000,
          allowHeader: false,
          minTtftMs: 1,
          priority: 0,
          maxHoldMs: 0,
          whenUnattainable: 'Serve',
          ...level,
        }
    }
  const app = createEdgeApp({
    config: async () => snapshot,
    quotas: createMemoryQuotaStore(),
    scorer: createScorerClient({
      urls: [stack.scorerUrl],
      signingSecret: stack.signingSecret,
      nowSeconds: () => Date.now() / 1000,
      fetch: (input, init) => fetch(input, init),
    }),
    external: createExternalProviders({
      credentials: () => ({ accessKeyId: 'AKIATESTTESTTEST0000', secretAccessKey: 'test' }),
    }),
    metrics: createEdgeMetrics(),
    nowMs: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    newRequestId: () => crypto.randomUUID(),
    log: () => {},
  })
  return (content: string, headers: Record<string, string> = {}) =>
    app.fetch(
      new Request('http://edge/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.demoKey}`, ...headers },
        body: JSON.stringify({
          model: 'qwen3.8-27b-fp8',
          messages: [{ role: 'user', content }],
          max_tokens: 4,
        }),
      }),
    )
}

const bedrockCalls = async () =>
  (
    (await (await fetch(`${started.stack.bedrockUrl}/__fake/requests`)).json()) as {
      count: number
    }
  ).count
const errorOf = async (response: Response) =>
  ((await response.json()) as { error: { code: string; type: string; param: unknown } }).error
const backendOf = (response: Response) =>
  /backend=([^;\s]+)/.exec(response.headers.get('x-kinference-decision') ?? '')?.[1]

describe('service levels on the live path (edge → scorer → pods or Bedrock)', () => {
  it('serves locally a request whose objective the best pod meets', async () => {
    const before = await bedrockCalls()
    const served = await edge({ whenUnattainable: 'BurstOrShed' })('met in time')
    expect(served.status).toBe(200)
    expect(backendOf(served)).toBe('demo/sim-local')
    expect(await bedrockCalls()).toBe(before)
  })

  it('bursts one it misses to Bedrock when the rule allows and it carries no PII', async () => {
    const before = await bedrockCalls()
    const burst = await edge({ ttftMs: 1, whenUnattainable: 'BurstOrShed' })('too slow here')
    expect(burst.status).toBe(200)
    expect(backendOf(burst)).toBe('demo/bedrock-claude')
    expect(await bedrockCalls()).toBe(before + 1)
  })

  it('never bursts one with PII: BurstOrShed sheds it with 429, Retry-After and the request id', async () => {
    const before = await bedrockCalls()
    const shed = await edge({ ttftMs: 1, whenUnattainable: 'BurstOrShed' })(card, {
      'x-request-id': 'client-req-7',
    })
    expect(shed.status).toBe(429)
    expect(Number(shed.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(shed.headers.get('x-request-id')).toBe('client-req-7')
    expect(await errorOf(shed)).toMatchObject({
      code: 'slo_unattainable',
      type: 'rate_limit_error',
    })
    // Burst (not BurstOrShed) serves it locally instead, still never on Bedrock.
    const local = await edge({ ttftMs: 1, whenUnattainable: 'Burst' })(card)
    expect(local.status).toBe(200)
    expect(backendOf(local)).toBe('demo/sim-local')
    expect(await bedrockCalls()).toBe(before)
  })

  it('sheds with 429 and Retry-After when the rule says Shed', async () => {
    const before = await bedrockCalls()
    const shed = await edge({ ttftMs: 1, whenUnattainable: 'Shed' })('shed me')
    expect(shed.status).toBe(429)
    expect(shed.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
    expect((await errorOf(shed)).code).toBe('slo_unattainable')
    expect(await bedrockCalls()).toBe(before)
  })

  it("takes the client's header where the rule allows it, and ignores it where not", async () => {
    const allowed = edge({ allowHeader: true, whenUnattainable: 'Shed' })
    expect((await allowed('tight', { [header]: '1' })).status).toBe(429)
    expect((await allowed('loose', { [header]: '600000' })).status).toBe(200)
    const closed = edge({ allowHeader: false, whenUnattainable: 'Shed' })
    const ignored = await closed('tight but ignored', { [header]: '1' })
    expect(ignored.status).toBe(200)
    expect(backendOf(ignored)).toBe('demo/sim-local')
  })

  it('answers a malformed header 400 in OpenAI’s shape, whatever the policy', async () => {
    for (const send of [edge(), edge({ allowHeader: true })])
      for (const value of ['abc', '0', '-5', '1.5', '1e3', '600001', ' ']) {
        const response = await send('bad header', { [header]: value })
        expect(response.status).toBe(400)
        expect(await errorOf(response)).toMatchObject({
          code: 'invalid_request',
          type: 'invalid_request_error',
          param: header,
        })
      }
  })

  it('changes nothing for a policy without a service level, header or not', async () => {
    const send = edge()
    for (const headers of [{}, { [header]: '1' }] as Record<string, string>[]) {
      const response = await send('as before', headers)
      expect(response.status).toBe(200)
      expect(backendOf(response)).toBe('demo/sim-local')
    }
  })
})
