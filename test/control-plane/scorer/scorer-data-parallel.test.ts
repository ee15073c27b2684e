import { describe, expect, it } from 'vitest'
import type { SimPod } from '../../../control-plane/lab/sim/sim-pod.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import {
  adminPods,
  decisionOf,
  lookup,
  model,
  type Stack,
  send,
  systemChat,
  until,
  words,
} from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

const { indexOptions } = useRedisTestNamespaces()
const stacks = useScorerStacks()

const chat = (system: string, question: string, extra: object = {}) =>
  systemChat(system, question, { ignore_eos: true, ...extra })

/** A request straight to the pod, on the rank the header names, as a client of vLLM sends it. */
function direct(pod: SimPod, body: object, rank: number, signal?: AbortSignal) {
  return fetch(`${pod.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-data-parallel-rank': String(rank) },
    body: JSON.stringify(body),
    ...(signal && { signal }),
  })
}

/** Blocks of the request's prompt each endpoint holds, as the scorer's index says. */
async function held(target: Stack, body: { messages: object[] }): Promise<Record<string, number>> {
  const { pods } = await lookup(target, { model, messages: body.messages })
  return Object.fromEntries(pods.map((pod) => [pod.pod, pod.matchedBlocks]))
}

const podReports = async (target: Stack) =>
  (await adminPods(target)).pools.flatMap((pool) => pool.pods)

describe.each(['memory', 'redis'] as const)(
  'the scorer in front of a pod with two data-parallel ranks (%s index)',
  (backend) => {
    const startStack = () =>
      stacks.start({ pods: 1, dataParallelSize: 2, ...indexOptions(backend) })

    it('indexes each rank from its own feed and routes a prefix to the rank holding it', async () => {
      const stack = await startStack()
      const [pod] = stack.pods as [SimPod]
      // One endpoint per rank, each on its own KV-event and replay socket.
      expect(
        stack.scorer.pools[0]?.endpoints().map((e) => [e.name, e.dataParallelRank, e.events]),
      ).toEqual([
        ['sim-pod-0/dp0', 0, pod.kvEventsEndpoints[0]],
        ['sim-pod-0/dp1', 1, pod.kvEventsEndpoints[1]],
      ])

      // Rank 1 computes prefix A, rank 0 prefix B, sent to the pod directly.
      const a = chat(words(31, 500), 'a question')
      const b = chat(words(32, 500), 'b question')
      expect((await direct(pod, a, 1)).status).toBe(200)
      expect((await direct(pod, b, 0)).status).toBe(200)
      await until(async () => ((await held(stack, a))['sim-pod-0/dp1'] ?? 0) > 10)
      await until(async () => ((await held(stack, b))['sim-pod-0/dp0'] ?? 0) > 10)
      expect((await held(stack, a))['sim-pod-0/dp0']).toBe(0)
      expect((await held(stack, b))['sim-pod-0/dp1']).toBe(0)

      // Through the scorer, each follow-up goes to its prefix's rank, and the rank header
      // reaches the pod: the engine that answers is the one holding the prefix.
      for (const [body, rank] of [
        [a, 1],
        [b, 0],
        [a, 1],
      ] as const) {
        const answer = await send(stack, '/v1/chat/completions', {
          ...body,
          messages: [body.messages[0], { role: 'user', content: `follow-up ${rank}` }],
        })
        expect(answer.status).toBe(200)
        expect(decisionOf(answer.headers).pod).toBe(`sim-pod-0/dp${rank}`)
        expect(JSON.parse(answer.text).usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(
          1000,
        )
      }
      const [rank0, rank1] = pod.runtime().ranks.map((rank) => rank.engine.stats)
      expect(rank1?.prefixCacheHits).toBeGreaterThan(2000)
      expect(rank0?.prefixCacheHits).toBeGreaterThan(1000)
      expect(rank0?.prefixCacheHits).toBeLessThan(rank1?.prefixCacheHits ?? 0)
    })

    it('reads each rank’s load from its own series of the pod’s metrics', async () => {
      const stack = await startStack()
      const [pod] = stack.pods as [SimPod]
      const busy = new AbortController()
      const long = direct(pod, chat(words(33, 50), 'go on', { max_tokens: 20_000 }), 1, busy.signal)
      long.catch(() => {})
      try {
        await until(async () => {
          const reports = await podReports(stack)
          const running = (name: string) =>
            reports.find((r) => r.name === name)?.metrics?.running ?? -1
          return running('sim-pod-0/dp1') === 1 && running('sim-pod-0/dp0') === 0
        })
      } finally {
        busy.abort()
      }
      const reports = await podReports(stack)
      expect(reports.map((r) => [r.name, r.endpoint?.dataParallelRank])).toEqual([
        ['sim-pod-0/dp0', 0],
        ['sim-pod-0/dp1', 1],
      ])
    })
  },
)
