import { describe, expect, it } from 'vitest'
import type { SimPod } from '../../../control-plane/lab/sim/sim-pod.ts'
import type { PodState } from '../../../shared/state/pod-state.ts'
import type { PoolState } from '../../../shared/state/pool-state.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { runCli } from '../../support/run-cli.ts'
import {
  adminPods,
  decisionOf,
  model,
  poolSpec,
  type Stack,
  send,
  statusView,
  until,
  words,
} from '../../support/scorer-stack.ts'
import { snapshotOf, startFromSnapshot, startPods } from '../../support/snapshot-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// Issue 23's done-when: a pool whose tokenizer files are missing degrades alone, with its
// condition (shared state, inspect, status page) and metric, while the other pool keeps
// routing on the cache.

const { uniquePrefix } = useRedisTestNamespaces()
const stacks = useScorerStacks()

const missing = '/nonexistent/dir'
const degradedSpec = poolSpec({
  models: [{ name: model, tokenizer: missing, maxContextTokens: 32_768 }],
})
const chat = (seed: number) => ({
  model,
  messages: [{ role: 'user', content: words(seed, 300) }],
  max_tokens: 2,
  ignore_eos: true,
})

/** A chat sent as the edge sends it, allowed only the pool's backend. */
async function ask(s: Stack, pool: string, seed: number) {
  const answer = await send(s, '/v1/chat/completions', chat(seed), {
    backends: [`${pool}-local`],
  })
  expect(answer.status, answer.text).toBe(200)
  return decisionOf(answer.headers)
}

describe('a pool whose tokenizer cannot be loaded', () => {
  it('routes on load alone, marked, while the other pool keeps routing on the cache', async () => {
    const pods = await startPods(4)
    const [p0, p1, p2, p3] = pods as [SimPod, SimPod, SimPod, SimPod]
    const snapshot = await snapshotOf([
      { name: 'cached', pods: [p0, p1] },
      { name: 'degraded', spec: degradedSpec, pods: [p2, p3] },
    ])
    const prefix = uniquePrefix()
    // The snapshot is applied whole: the missing tokenizer refuses nothing.
    const s = stacks.closing(
      await startFromSnapshot(pods, snapshot, { redisUrl, redisPrefix: prefix }),
    )
    expect(s.scorer.snapshotHash).toBe(snapshot.hash)

    // The cache-aware pool: once the pods' KV events are in, the prompt's repeat matches.
    const first = await ask(s, 'cached', 1)
    expect(first).toMatchObject({ pool: 'cached', matched_tokens: '0' })
    await until(async () => Number((await ask(s, 'cached', 1)).matched_tokens) > 0)
    expect(await ask(s, 'cached', 1)).toMatchObject({ pod: first.pod })

    // The degraded pool serves every request, never matching anything.
    for (let i = 0; i < 4; i++)
      expect(await ask(s, 'degraded', 2)).toMatchObject({ pool: 'degraded', matched_tokens: '0' })

    // Enough answers for the guard: the cached pool's counts agree with its pods'; the
    // degraded pool's estimates are never compared.
    for (let i = 0; i < 10; i++) await ask(s, 'cached', 10 + i)

    // The condition, in the shared state as kinfctl inspect reads it.
    await s.scorer.flushState()
    const inspect = (...args: string[]) =>
      runCli(['inspect', ...args, '--prefix', prefix], '', { env: { REDIS_URL: redisUrl } })
    const json = await inspect('pods', '-o', 'json')
    expect(json.code, json.stderr).toBe(0)
    const { pods: states, pools } = JSON.parse(json.stdout) as {
      pods: PodState[]
      pools: PoolState[]
    }
    expect(states).toHaveLength(4)
    const ready = (pool: string) =>
      pools
        .find((p) => p.pool === `test/${pool}`)
        ?.conditions.find((c) => c.type === 'TokenizerReady')
    expect(ready('cached')).toMatchObject({ status: 'True', reason: 'TokenizerLoaded' })
    expect(ready('degraded')).toMatchObject({
      status: 'False',
      reason: 'TokenizerUnavailable',
      replicas: [s.scorer.replica],
    })
    expect(ready('degraded')?.message).toContain(`tokenizer ${missing} (model ${model})`)
    const agrees = (pool: string) =>
      pools
        .find((p) => p.pool === `test/${pool}`)
        ?.conditions.find((c) => c.type === 'TokenizationAgrees')
    expect(agrees('cached')).toMatchObject({ status: 'True', reason: 'CountsAgree' })
    expect(agrees('cached')?.message).toMatch(/^prompt_tokens agreed on (\d+) of \1\b/)
    expect(agrees('degraded')).toMatchObject({ status: 'Unknown', reason: 'NotCompared' })
    const table = await inspect('pods')
    expect(table.stdout).toMatch(
      /pool test\/degraded: TokenizerReady False \(TokenizerUnavailable\) for [\d.]+s on .+: tokenizer \/nonexistent\/dir/,
    )
    expect(table.stdout).not.toMatch(/pool test\/cached:/)

    // The metric, and the status page.
    const metrics = await (await fetch(`${s.scorer.metricsUrl}/metrics`)).text()
    expect(metrics).toMatch(/kinference_scorer_pool_tokenizer_ready\{pool="cached"\} 1/)
    expect(metrics).toMatch(/kinference_scorer_pool_tokenizer_ready\{pool="degraded"\} 0/)
    expect(metrics).toMatch(
      /kinference_scorer_pool_condition\{condition="TokenizerReady",pool="degraded",status="False"\} 1/,
    )
    expect(metrics).toMatch(
      /kinference_scorer_token_comparisons_total\{kind="prompt",pool="cached"\} (1\d|[2-9]\d)/,
    )
    expect(metrics).toMatch(
      /kinference_scorer_token_disagreements_total\{kind="prompt",pool="cached"\} 0/,
    )
    expect(metrics).toMatch(
      /kinference_scorer_token_comparisons_total\{kind="prompt",pool="degraded"\} 0/,
    )
    const status = await statusView(s)
    const page = status.pools.find((p) => p.name === 'test/degraded')
    expect(page?.pods).toHaveLength(2)
    expect(page?.conditions.find((c) => c.type === 'TokenizerReady')).toMatchObject({
      status: 'False',
      reason: 'TokenizerUnavailable',
    })

    const admin = await adminPods(s)
    expect(admin.pools.find((p) => p.name === 'degraded')?.conditions).toContainEqual(
      expect.objectContaining({ type: 'TokenizerReady', status: 'False' }),
    )

    // A new snapshot tries the tokenizer again: still missing, still marked, still served.
    const next = await snapshotOf([
      { name: 'cached', pods: [p0, p1] },
      { name: 'degraded', spec: degradedSpec, pods: [p2] },
    ])
    expect(await s.scorer.applySnapshot(next)).toMatchObject({ outcome: 'applied' })
    expect(await ask(s, 'degraded', 3)).toMatchObject({ pod: p2.config.podName })
    expect(s.scorer.pools.find((p) => p.name === 'degraded')?.tokenizerReady).toBe(false)
  })
})
