import { afterEach, describe, expect, it } from 'vitest'
import {
  createEdgeDecisionRecorder,
  type EdgeDecisionRecorder,
} from '../../../control-plane/edge/edge-decision-recorder.ts'
import { type RunningEdge, startEdge } from '../../../control-plane/edge/start-edge.ts'
import { createRedisStateStore } from '../../../control-plane/state/redis-state-store.ts'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import type { Decision } from '../../../shared/state/decision-entry.ts'
import { externalOutcome, externalStrategy } from '../../../shared/state/external-strategy.ts'
import type { StateStore } from '../../../shared/state/state-store.ts'
import {
  demoBedrock,
  postBedrockOnly,
  useDemoEdgeFixture,
} from '../../support/demo-edge-fixture.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { runCli } from '../../support/run-cli.ts'

/**
 * Issue 28 on Node, through real Redis: a request whose rule names only Bedrock is decided
 * and served by the edge alone (no scorer is running), and `kinfctl inspect decisions`
 * lists it, as it lists the bursts the scorer hands back.
 */
const demo = useDemoEdgeFixture()
const { uniquePrefix } = useRedisTestNamespaces()

const running: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const part of running.splice(0).reverse()) await part.close()
})

async function edgeOnRedis(prefix: string, flushMs?: number) {
  const state: StateStore = await createRedisStateStore({ redis: redisUrl, prefix })
  running.push(state)
  const decisions: EdgeDecisionRecorder = createEdgeDecisionRecorder({
    store: state,
    log: () => {},
    replica: 'edge-under-test',
    ...(flushMs === undefined ? {} : { flushMs }),
  })
  running.push(decisions)
  const edge: RunningEdge = await startEdge({
    port: 0,
    metricsPort: null,
    config: async () => demo.snapshot,
    // Nothing listens there: a Bedrock-only rule never asks the scorer.
    scorerUrls: ['http://127.0.0.1:1'],
    signingSecret: 'edge-decision-recorder-test-secret',
    quotas: createMemoryQuotaStore(),
    awsCredentials: { accessKeyId: 'AKIAEDGETEST00000000', secretAccessKey: 'edge-test' },
    log: () => {},
    accessLog: false,
    decisions,
  })
  running.push(edge)
  return { edge, decisions, state }
}

const inspect = (prefix: string) =>
  runCli(['inspect', 'decisions', '-o', 'json', '--prefix', prefix], '', {
    env: { REDIS_URL: redisUrl },
  })

describe('the Node edge’s decision log in Redis', () => {
  it('lists a Bedrock-only request the edge served without the scorer', async () => {
    const prefix = uniquePrefix()
    const { edge, decisions } = await edgeOnRedis(prefix)
    const answer = await postBedrockOnly(edge.url, demo.demoKey, 'client-bedrock-only-1')
    expect(answer.status).toBe(200)
    await decisions.flush()

    const run = await inspect(prefix)
    expect(run.stderr).toBe('')
    const { decisions: listed } = JSON.parse(run.stdout) as { decisions: Decision[] }
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({
      clientRequestId: 'client-bedrock-only-1',
      replica: 'edge-under-test',
      tenant: 'demo',
      policy: 'demo/demo',
      rule: 'bedrock-on-request',
      backend: demoBedrock.backend,
      pool: demoBedrock.provider,
      pod: demoBedrock.model,
      strategy: externalStrategy,
      end: { outcome: externalOutcome, status: 200 },
    })
    expect(listed[0]?.requestId).not.toBe('client-bedrock-only-1')
    expect(listed[0]?.end?.outputTokens).toBeGreaterThan(0)
  })

  it('writes what is queued when it closes', async () => {
    const prefix = uniquePrefix()
    // No timer writes within the test: only closing does.
    const { edge, decisions, state } = await edgeOnRedis(prefix, 600_000)
    await postBedrockOnly(edge.url, demo.demoKey, 'client-written-on-close')
    expect(await state.readDecisions({})).toEqual([])
    await decisions.close()
    const run = await inspect(prefix)
    const { decisions: listed } = JSON.parse(run.stdout) as { decisions: Decision[] }
    expect(listed.map((d) => [d.strategy, d.end?.outcome])).toEqual([
      [externalStrategy, externalOutcome],
    ])
  })
})
