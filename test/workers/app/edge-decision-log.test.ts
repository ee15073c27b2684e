import { describe, expect, it } from 'vitest'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import type { RouteDecision } from '../../../shared/scorer-api/route-protocol.ts'
import {
  type DecisionEntry,
  joinDecisions,
  type StoredDecisionEntry,
} from '../../../shared/state/decision-entry.ts'
import { externalOutcome, externalStrategy } from '../../../shared/state/external-strategy.ts'
import { createEdgeApp } from '../../../workers/app/edge-app.ts'
import {
  type EdgeDecisionLog,
  edgeDecidedEntry,
  edgeEndedEntry,
} from '../../../workers/app/edge-decision-log.ts'
import type { ExternalPort } from '../../../workers/app/edge-deps.ts'
import { createEdgeMetrics } from '../../../workers/app/edge-metrics.ts'
import { createExternalProviders } from '../../../workers/app/external-providers.ts'
import type { ScorerPort } from '../../../workers/app/scorer-client.ts'
import {
  demoBedrock,
  demoLocal,
  demoServe,
  useDemoEdgeFixture,
} from '../../support/demo-edge-fixture.ts'

/**
 * Issue 28: a request the edge decides alone (its rule names only Bedrock, so no pool's
 * status matters and the scorer is never asked; or the scorer is unreachable) and serves
 * on Bedrock is in the decision log, as the scorer logs the ones it hands back. One the
 * scorer decided and handed back is logged by the scorer only.
 */
const demo = useDemoEdgeFixture()

interface EdgeOptions {
  /** The scorer's answer to a route call; absent: the scorer cannot be reached. */
  route?: () => RouteDecision
  /** The scorer's answer to a forwarded local attempt; absent: unreachable. */
  forward?: () => Response
  /** Replaces the Bedrock stand-in. */
  external?: ExternalPort
  /** The log throws, breaking its contract. */
  throwingLog?: boolean
}

function edge(options: EdgeOptions = {}) {
  const entries: DecisionEntry[] = []
  const decisions: EdgeDecisionLog = {
    replica: 'edge-test',
    record: (entry) => {
      if (options.throwingLog) throw new Error('log full')
      entries.push(entry)
    },
  }
  const scorerCalls: string[] = []
  const scorer: ScorerPort = {
    route: async () => {
      scorerCalls.push('route')
      if (!options.route) throw new Error('connect ECONNREFUSED')
      return { kind: 'decided', decided: options.route() }
    },
    forward: async () => {
      scorerCalls.push('forward')
      if (!options.forward) throw new KinfError('upstream_unavailable', 'scorer unreachable')
      return options.forward()
    },
  }
  let clock = 1_800_000_000_000
  const ids = ['edge-id-1', 'edge-id-2', 'edge-id-3']
  const app = createEdgeApp({
    config: async () => demo.snapshot,
    quotas: createMemoryQuotaStore(),
    scorer,
    external:
      options.external ??
      createExternalProviders({
        credentials: () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
      }),
    metrics: createEdgeMetrics(),
    // A millisecond per reading: latencies are positive and ordered.
    nowMs: () => clock++,
    sleep: async () => {},
    newRequestId: () => ids.shift() ?? 'edge-id-n',
    log: () => {},
    decisions,
    accessLog: false,
  })
  const ask = async (body: object, headers: Record<string, string> = {}) => {
    const answer = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${demo.demoKey}`,
        'content-type': 'application/json',
        ...headers,
      },
      body: JSON.stringify(body),
    })
    // The end is logged when the answer has been read to its end.
    const text = await answer.text()
    return { status: answer.status, headers: answer.headers, text }
  }
  const logged = () =>
    joinDecisions(entries.map((entry, i): StoredDecisionEntry => ({ id: `${i + 1}-0`, entry })))
  return { ask, entries, logged, scorerCalls }
}

const toClaude = {
  model: 'claude-sonnet',
  messages: [{ role: 'user', content: 'Hello there' }],
  max_tokens: 8,
}
const toQwen = { ...toClaude, model: 'qwen3.8-27b-fp8' }

describe('the edge’s decision log', () => {
  it('logs a Bedrock-only request it decided without the scorer, decided then ended', async () => {
    const { ask, entries, logged, scorerCalls } = edge()
    const answer = await ask(toClaude, { 'x-request-id': 'client-1' })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-kinference-decision')).toContain('backend=demo/bedrock-claude')
    expect(scorerCalls).toEqual([])
    expect(entries.map((entry) => entry.kind)).toEqual(['decided', 'ended'])
    const [decision] = logged()
    expect(logged()).toHaveLength(1)
    expect(decision).toMatchObject({
      requestId: 'edge-id-1',
      clientRequestId: 'client-1',
      replica: 'edge-test',
      tenant: 'demo',
      policy: 'demo/demo',
      rule: 'bedrock-on-request',
      backend: demoBedrock.backend,
      pool: demoBedrock.provider,
      pod: demoBedrock.model,
      strategy: externalStrategy,
      model: demoBedrock.model,
      matchedTokens: 0,
      predictedTtftMs: 0,
      end: { outcome: externalOutcome, status: 200 },
    })
    expect(decision?.promptTokens).toBeGreaterThan(0)
    // The edge asks Bedrock for a stream it assembles into JSON: its first event is timed.
    expect(decision?.end?.ttftMs).toBeGreaterThan(0)
    expect(decision?.end?.latencyMs).toBeGreaterThan(0)
    expect(decision?.end?.outputTokens).toBeGreaterThan(0)
  })

  it('times a streamed answer’s first event, and keys a request without x-request-id on its own id', async () => {
    const { ask, logged } = edge()
    const answer = await ask({ ...toClaude, stream: true })
    expect(answer.status).toBe(200)
    expect(answer.text).toContain('data: [DONE]')
    const [decision] = logged()
    expect(decision?.requestId).toBe('edge-id-1')
    expect(decision).not.toHaveProperty('clientRequestId')
    expect(decision?.end?.outcome).toBe(externalOutcome)
    expect(decision?.end?.ttftMs).toBeGreaterThan(0)
    expect(decision?.end?.ttftMs).toBeLessThanOrEqual(decision?.end?.latencyMs ?? 0)
  })

  it('logs the Bedrock attempt of a decision made without an unreachable scorer', async () => {
    const { ask, logged, scorerCalls } = edge()
    const answer = await ask(toQwen)
    expect(answer.status).toBe(200)
    // Asked to route, then to serve the local attempt: both unreachable, so Bedrock served.
    expect(scorerCalls).toEqual(['route', 'forward'])
    expect(logged()).toMatchObject([
      {
        rule: 'local-then-bedrock',
        pool: demoBedrock.provider,
        strategy: externalStrategy,
        end: { outcome: externalOutcome, status: 200 },
      },
    ])
  })

  it('logs nothing for an external attempt the scorer decided and handed back (it logged it)', async () => {
    const { ask, entries, scorerCalls } = edge({
      route: () => ({
        decision: demoServe(demoLocal, demoBedrock),
        from: 1,
        notes: ['demo/sim-local: saturated'],
        promptTokens: 9,
      }),
    })
    const answer = await ask(toQwen)
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-kinference-decision')).toContain('backend=demo/bedrock-claude')
    expect(scorerCalls).toEqual(['route'])
    expect(entries).toEqual([])
  })

  it('logs a Bedrock attempt made past the attempts the scorer handed over (none logged it)', async () => {
    const { ask, logged } = edge({
      route: () => ({
        decision: demoServe(demoLocal, demoBedrock),
        from: 0,
        notes: [],
        promptTokens: 9,
      }),
      forward: () =>
        Response.json(
          { error: { message: 'pool saturated', type: 'saturated', param: null, code: null } },
          { status: 503, headers: { 'x-kinference-saturated': '1' } },
        ),
    })
    expect((await ask(toQwen)).status).toBe(200)
    expect(logged()).toMatchObject([{ pool: demoBedrock.provider, strategy: externalStrategy }])
  })

  it('ends a failed attempt as failed-before-bytes with its status', async () => {
    const failing: ExternalPort = {
      complete: async () => {
        throw new KinfError('upstream_unavailable', 'Bedrock is down')
      },
      countTokens: async () => null,
    }
    const { ask, logged } = edge({ external: failing })
    const answer = await ask(toClaude)
    expect(answer.status).toBeGreaterThanOrEqual(500)
    expect(logged()).toMatchObject([
      {
        strategy: externalStrategy,
        end: { outcome: 'failed-before-bytes', status: answer.status, outputTokens: null },
      },
    ])
  })

  it('answers when the log throws: the entries are lost, never the request', async () => {
    const { ask, entries } = edge({ throwingLog: true })
    const answer = await ask(toClaude)
    expect(answer.status).toBe(200)
    expect(answer.text).toContain('chat.completion')
    expect(entries).toEqual([])
  })
})

describe('the edge’s entries', () => {
  const attempt = {
    atMs: 1_000,
    edgeId: 'e-1',
    requestId: 'e-1',
    tenant: 't',
    policy: 'ns/p',
    rule: 'r',
    backend: 'ns/b',
    provider: 'ns/bedrock',
    model: 'claude',
    promptTokens: 12,
  }

  it('name the provider as the pool and its model as the pod, and no client id of its own', () => {
    expect(edgeDecidedEntry('edge-a', attempt)).toEqual({
      kind: 'decided',
      atMs: 1_000,
      requestId: 'e-1',
      replica: 'edge-a',
      tenant: 't',
      policy: 'ns/p',
      rule: 'r',
      backend: 'ns/b',
      pool: 'ns/bedrock',
      pod: 'claude',
      strategy: externalStrategy,
      model: 'claude',
      promptTokens: 12,
      matchedTokens: 0,
      predictedTtftMs: 0,
      heldMs: 0,
    })
  })

  it.each([
    [{ kind: 'answered', usage: null }, false, externalOutcome],
    [{ kind: 'refused' }, false, 'failed-before-bytes'],
    [{ kind: 'cut', metered: null }, false, 'failed-after-bytes'],
    [{ kind: 'cut', metered: null }, true, 'client-gone'],
    [{ kind: 'unanswered' }, true, 'client-gone'],
  ] as const)('end %j (client gone: %s) as %s', (outcome, clientGone, expected) => {
    const end = edgeEndedEntry(attempt, {
      atMs: 1_250,
      outcome,
      status: 200,
      firstEventAtMs: 1_040,
      clientGone,
    })
    expect(end).toEqual({
      kind: 'ended',
      atMs: 1_250,
      requestId: 'e-1',
      pod: 'claude',
      ttftMs: 40,
      latencyMs: 250,
      cachedTokens: null,
      outputTokens: null,
      outcome: expected,
      status: 200,
    })
  })

  it('count what the usage reported', () => {
    const usage = {
      prompt_tokens: 12,
      completion_tokens: 5,
      total_tokens: 17,
      prompt_tokens_details: { cached_tokens: 4 },
    }
    const end = edgeEndedEntry(attempt, {
      atMs: 1_100,
      outcome: { kind: 'cut', metered: { complete: false, usage, textEvents: 5, text: '' } },
      status: 200,
      firstEventAtMs: null,
      clientGone: false,
    })
    expect(end).toMatchObject({ ttftMs: null, cachedTokens: 4, outputTokens: 5 })
  })
})
