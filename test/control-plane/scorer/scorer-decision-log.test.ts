import { describe, expect, it } from 'vitest'
import { scorerPodOf } from '../../../control-plane/lab/sim/sim-fleet.ts'
import { ScorerConfig } from '../../../control-plane/scorer/scorer-config.ts'
import { startScorer } from '../../../control-plane/scorer/start-scorer.ts'
import { createRedisStateStore } from '../../../control-plane/state/redis-state-store.ts'
import { createStateReader } from '../../../control-plane/state/state-reader.ts'
import type { EdgeClaims } from '../../../shared/auth/edge-signature.ts'
import { joinDecisions } from '../../../shared/state/decision-entry.ts'
import { createScorerClient } from '../../../workers/app/scorer-client.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { decisionOf, model, poolSpec, secret } from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()
const stacks = useScorerStacks()

/** A forward as the edge makes it when its policy decided: the edge's own client, signed v4. */
function edgeClient(url: string) {
  return createScorerClient({
    urls: [url],
    signingSecret: secret,
    nowSeconds: () => Date.now() / 1000,
    fetch: (input, init) => fetch(input, init),
  })
}

const claims: EdgeClaims = {
  tenant: 'acme',
  labels: [],
  backends: [],
  allowBurst: false,
  decidedBy: { policy: 'team/acme', rule: 'local-first' },
}

describe('the scorer writes its decisions and its pods to the shared state', () => {
  it('logs a forward with the tenant, policy and rule the edge signed, then its end', async () => {
    const stack = await stacks.start({ pods: 2, redisUrl, redisPrefix: uniquePrefix() })
    const body = (stream: boolean) =>
      JSON.stringify({
        model,
        stream,
        messages: [{ role: 'user', content: `logged ${stream}` }],
        max_tokens: 3,
      })
    const forward = (stream: boolean, id: string) =>
      edgeClient(stack.scorer.url).forward('/v1/chat/completions', body(stream), claims, {
        'x-request-id': id,
      })
    const streamed = await forward(true, 'req-streamed')
    const header = decisionOf(streamed.headers)
    await streamed.text()
    const plain = await forward(false, 'req-plain')
    await plain.text()
    await stack.scorer.flushState()
    const [first, second] = joinDecisions(await stack.scorer.state.readDecisions({}))
    // The edge signed no request id here: the scorer made its own, the client's beside it.
    expect(first?.requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(first).toMatchObject({
      clientRequestId: 'req-streamed',
      replica: stack.scorer.replica,
      tenant: 'acme',
      policy: 'team/acme',
      rule: 'local-first',
      backend: null,
      pool: 'default',
      pod: header.pod,
      strategy: header.strategy,
      model,
      matchedTokens: Number(header.matched_tokens),
      end: { outcome: 'completed', status: 200, outputTokens: 3 },
    })
    expect(Math.round(first?.predictedTtftMs ?? -1)).toBe(Number(header.predicted_ttft_ms))
    expect(first?.end?.ttftMs).toBeGreaterThan(0)
    // Not streamed: no first token seen apart from the whole answer.
    expect(second).toMatchObject({
      clientRequestId: 'req-plain',
      end: { ttftMs: null, outcome: 'completed' },
    })
    expect(second?.end?.latencyMs).toBeGreaterThan(0)
    const metrics = await (await fetch(`${stack.scorer.metricsUrl}/metrics`)).text()
    expect(metrics).toMatch(/^kinference_scorer_decision_log_dropped_total 0\.0$/m)
    expect(metrics).toMatch(/^kinference_scorer_pod_view_write_failures_total 0\.0$/m)
  })

  it('writes its view of every pod, blocks from the shared index, which expires without it', async () => {
    const prefix = uniquePrefix()
    const stack = await stacks.start({ pods: 2, redisUrl, redisPrefix: prefix })
    const response = await edgeClient(stack.scorer.url).forward(
      '/v1/chat/completions',
      JSON.stringify({
        model,
        messages: [{ role: 'user', content: 'a block or two '.repeat(20) }],
        max_tokens: 2,
      }),
      claims,
      {},
    )
    const served = decisionOf(response.headers).pod
    await response.text()
    await new Promise((resolve) => setTimeout(resolve, 300)) // the pod's KV events
    await stack.scorer.flushState()
    const [view, ...others] = await stack.scorer.state.readPodViews(Date.now())
    expect(others).toEqual([])
    expect(view?.replica).toBe(stack.scorer.replica)
    expect(view?.pods.map((p) => p.pod).sort()).toEqual(['sim-pod-0', 'sim-pod-1'])
    const pod = view?.pods.find((p) => p.pod === served)
    expect(pod?.blocksIndexed).toBeGreaterThan(0)
    expect(pod).toMatchObject({
      pool: 'default',
      healthy: true,
      indexReady: true,
      trust: 'precise',
    })
    expect(pod?.events?.lastSeq).toMatch(/^\d+$/)
    await stack.close()
    const state = await createRedisStateStore({ redis, prefix })
    expect(await state.readPodViews(Date.now())).toHaveLength(1)
    // Its TTL (5 s by default) passed: the replica is gone from the shared state.
    expect(await state.readPodViews(Date.now() + 5_001)).toEqual([])
  })

  it('two replicas over one Redis: each pod merged from both views, both logs in one stream', async () => {
    const prefix = uniquePrefix()
    const stack = await stacks.start({ pods: 2, redisUrl, redisPrefix: prefix })
    const second = stacks.closing(
      await startScorer(
        ScorerConfig.parse({
          port: 0,
          signingSecrets: [secret],
          redisUrl,
          redisPrefix: prefix,
          replicaId: 'second',
          pools: [{ name: 'default', spec: poolSpec() }],
          pods: stack.pods.map((pod) => scorerPodOf(pod, 'default')),
        }),
        () => {},
      ),
    )
    for (const url of [stack.scorer.url, second.url]) {
      const client = edgeClient(url)
      const body = JSON.stringify({
        model,
        messages: [{ role: 'user', content: 'twice' }],
        max_tokens: 2,
      })
      await (await client.forward('/v1/chat/completions', body, claims, {})).text()
    }
    await Promise.all([stack.scorer.flushState(), second.flushState()])
    const state = await createRedisStateStore({ redis, prefix })
    const reader = createStateReader({
      state,
      snapshots: { current: async () => null, read: async () => null },
      quotas: { buckets: async () => [] },
      nowMs: Date.now,
    })
    const pods = await reader.pods()
    expect(pods.map((p) => [p.pod, p.replicas.sort()])).toEqual([
      ['sim-pod-0', [stack.scorer.replica, 'second'].sort()],
      ['sim-pod-1', [stack.scorer.replica, 'second'].sort()],
    ])
    const { decisions } = await reader.decisions()
    expect(decisions.map((d) => d.replica).sort()).toEqual([stack.scorer.replica, 'second'].sort())
    expect(decisions.every((d) => d.end?.outcome === 'completed')).toBe(true)
  })
})
