import { describe, expect, it } from 'vitest'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import {
  decisionOf,
  matchedBlocks,
  metricTotal,
  model,
  type Stack,
  send,
  until,
  words,
} from '../../support/scorer-stack.ts'
import { startTcpProxy } from '../../support/tcp-proxy.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

const { uniquePrefix } = useRedisTestNamespaces()
const stacks = useScorerStacks()

const messagesOf = (seed: number) => [
  { role: 'system', content: words(seed, 400) },
  { role: 'user', content: 'hi' },
]
const chat = (seed: number) => ({ model, max_tokens: 2, messages: messagesOf(seed) })

/** The blocks of `seed`'s prompt the index says `pod` holds (0 when cold or out). */
const matched = (stack: Stack, seed: number, pod: string) =>
  matchedBlocks(stack, { model, messages: messagesOf(seed) }, pod)

describe('the scorer with its Redis index cut', () => {
  it('keeps routing on load alone, then replays every pod into the index once Redis is back', async () => {
    const proxy = await startTcpProxy(Number(new URL(redisUrl).port || 6379))
    stacks.defer(() => proxy.stop())
    const stack = await stacks.start({ pods: 2, redisUrl: proxy.url, redisPrefix: uniquePrefix() })
    const before = await send(stack, '/v1/chat/completions', chat(1))
    expect(before.status).toBe(200)
    const warmPod = decisionOf(before.headers).pod ?? ''
    await until(async () => (await matched(stack, 1, warmPod)) > 0)

    await proxy.stop()
    // Served, and scored cold: the index's answer is not waited for.
    const during = await send(stack, '/v1/chat/completions', chat(2))
    expect(during.status).toBe(200)
    const outagePod = decisionOf(during.headers).pod ?? ''
    for (const seed of [3, 4, 5])
      expect((await send(stack, '/v1/chat/completions', chat(seed))).status).toBe(200)
    expect(await matched(stack, 1, warmPod)).toBe(0)
    expect(await metricTotal(stack, 'kinference_scorer_index_cold_lookups_total')).toBeGreaterThan(
      0,
    )

    await proxy.start()
    const restoredAtMs = Date.now()
    // The prompt served during the outage: its blocks' events failed to apply then, and
    // are in the index only if the pod's history was replayed.
    await until(async () => (await matched(stack, 2, outagePod)) > 0)
    expect(await matched(stack, 1, warmPod)).toBeGreaterThan(0)
    expect(await metricTotal(stack, 'kinference_scorer_index_resyncs_total')).toBe(1)
    // Shared state is written again.
    await stack.scorer.flushState()
    const views = await stack.scorer.state.readPodViews(Date.now())
    const mine = views.find((view) => view.replica === stack.scorer.replica)
    expect(mine?.writtenAtMs).toBeGreaterThanOrEqual(restoredAtMs)
  })
})
