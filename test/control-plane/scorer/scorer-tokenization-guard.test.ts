import { describe, expect, it } from 'vitest'
import type { SimPod } from '../../../control-plane/lab/sim/sim-pod.ts'
import type { PoolState } from '../../../shared/state/pool-state.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { runCli } from '../../support/run-cli.ts'
import {
  decisionOf,
  lookup,
  model,
  poolSpec,
  type Stack,
  send,
  statusView,
  words,
} from '../../support/scorer-stack.ts'
import { startPod, tokenizeOn } from '../../support/sim-pods.ts'
import { snapshotOf, startFromSnapshot } from '../../support/snapshot-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// The runtime guard end to end: simulated pods serving Llama 3.1's tokenizer (their own
// loader, control-plane/lab/sim/model) behind a pool that declares Qwen3's. Every answer's
// usage.prompt_tokens differs from the scorer's count: the pool's TokenizationAgrees turns
// False with one request as its example, in the shared state, `kinfctl inspect pods`, the
// status page and /metrics. Declaring the pods' tokenizer makes the counts agree again.

const { uniquePrefix } = useRedisTestNamespaces()
const stacks = useScorerStacks()

const chat = (seed: number) => ({
  model,
  messages: [{ role: 'user', content: `Say something about ${words(seed, 40)}.` }],
  max_tokens: 2,
  ignore_eos: true,
})

async function podsServing(tokenizer: string): Promise<SimPod[]> {
  return Promise.all(
    [0, 1].map((i) =>
      startPod({ podName: `llama-pod-${i}`, tokenizer, enablePromptTokensDetails: true }),
    ),
  )
}

const lookupCount = async (s: Stack, seed: number) => (await lookup(s, chat(seed))).promptTokens

const tokenizeOnPod = async (pod: SimPod, seed: number) =>
  (await tokenizeOn(pod, { model, messages: chat(seed).messages })).count

describe('the runtime guard', () => {
  it('marks a pool whose pods tokenize otherwise, with one example, until they agree', async () => {
    const pods = await podsServing('llama3.1')
    const prefix = uniquePrefix()
    const declared = (tokenizer: string) =>
      poolSpec({ models: [{ name: model, tokenizer, maxContextTokens: 32_768 }] })
    const s = stacks.closing(
      await startFromSnapshot(
        pods,
        await snapshotOf([{ name: 'mixed', spec: declared('qwen3'), pods }]),
        { redisUrl, redisPrefix: prefix },
      ),
    )
    let last = { seed: 0, pod: '' }
    for (let seed = 1; seed <= 10; seed++) {
      const answer = await send(s, '/v1/chat/completions', chat(seed))
      expect(answer.status, answer.text).toBe(200)
      last = { seed, pod: decisionOf(answer.headers).pod ?? '' }
    }
    await s.scorer.flushState()
    const inspect = (...args: string[]) =>
      runCli(['inspect', ...args, '--prefix', prefix], '', { env: { REDIS_URL: redisUrl } })
    const json = await inspect('pods', '-o', 'json')
    expect(json.code, json.stderr).toBe(0)
    const { pools } = JSON.parse(json.stdout) as { pools: PoolState[] }
    const agrees = pools[0]?.conditions.find((c) => c.type === 'TokenizationAgrees')
    expect(agrees).toMatchObject({ status: 'False', reason: 'PromptTokensDisagree' })
    // The example is the last request that disagreed, with both counts as each side makes them.
    const pod = pods.find((p) => p.config.podName === last.pod)
    if (!pod) throw new Error(`no pod ${last.pod}`)
    const scorer = await lookupCount(s, last.seed)
    const reported = await tokenizeOnPod(pod, last.seed)
    expect(scorer).not.toBe(reported)
    expect(agrees?.example).toMatchObject({
      kind: 'prompt',
      model,
      pod: last.pod,
      scorer,
      reported,
    })
    expect(agrees?.message).toContain('for 10 of 10 answered requests in the last 5m')
    expect(agrees?.message).toContain(
      `(model ${model}) on pod ${last.pod}: the scorer counted ${scorer} prompt tokens, the pod ${reported}`,
    )
    expect((await inspect('pods')).stdout).toMatch(
      /pool test\/mixed: TokenizationAgrees False \(PromptTokensDisagree\) for .+e\.g\. request \S+ \(model/,
    )
    const status = await statusView(s)
    expect(status.pools[0]?.conditions.find((c) => c.type === 'TokenizationAgrees')).toMatchObject({
      status: 'False',
      example: { scorer, reported },
    })
    const metrics = await (await fetch(`${s.scorer.metricsUrl}/metrics`)).text()
    expect(metrics).toMatch(
      /kinference_scorer_token_disagreements_total\{kind="prompt",pool="mixed"\} 10/,
    )

    // The pool declares what its pods serve: a new runtime, whose counts agree.
    const fixed = await snapshotOf([{ name: 'mixed', spec: declared('llama3.1'), pods }])
    expect(await s.scorer.applySnapshot(fixed)).toMatchObject({ outcome: 'applied' })
    for (let seed = 1; seed <= 10; seed++)
      expect((await send(s, '/v1/chat/completions', chat(seed))).status).toBe(200)
    await s.scorer.flushState()
    const after = JSON.parse((await inspect('pods', '-o', 'json')).stdout) as { pools: PoolState[] }
    expect(after.pools[0]?.conditions.find((c) => c.type === 'TokenizationAgrees')).toMatchObject({
      status: 'True',
      reason: 'CountsAgree',
    })
    expect((await inspect('pods')).stdout).not.toContain('TokenizationAgrees False')
  })
})
