import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import type { SimPod } from '../../../control-plane/lab/sim/sim-pod.ts'
import {
  adminToken,
  decisionOf,
  lookup,
  model,
  type Stack,
  send,
  startStack as startBase,
  until,
  words,
} from '../../support/scorer-stack.ts'

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
let stack: Stack | undefined
let prefix: string | null = null
afterEach(async () => {
  await stack?.close()
  stack = undefined
  if (prefix !== null) {
    const redis = new Redis(redisUrl)
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
    await redis.quit()
    prefix = null
  }
})

const chat = (system: string, question: string, extra: object = {}) => ({
  model,
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: question },
  ],
  max_tokens: 4,
  ignore_eos: true,
  ...extra,
})

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

interface PodReport {
  name: string
  metrics: { running: number; waiting: number } | null
  events: { batches?: number } | null
  endpoint: { dataParallelRank: number | null }
}

async function podReports(target: Stack): Promise<PodReport[]> {
  const response = await fetch(`${target.scorer.url}/admin/pods`, {
    headers: { authorization: `Bearer ${adminToken}` },
  })
  const body = (await response.json()) as { pools: { pods: PodReport[] }[] }
  return body.pools.flatMap((pool) => pool.pods)
}

describe.each(['memory', 'redis'] as const)(
  'the scorer in front of a pod with two data-parallel ranks (%s index)',
  (backend) => {
    const startStack = () => {
      const options = { pods: 1, dataParallelSize: 2 }
      if (backend === 'memory') return startBase(options)
      prefix = `kinf-test:${Math.random().toString(36).slice(2)}:`
      return startBase({ ...options, redisUrl, redisPrefix: prefix })
    }

    it('indexes each rank from its own feed and routes a prefix to the rank holding it', async () => {
      stack = await startStack()
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
      await until(async () => ((await held(stack as Stack, a))['sim-pod-0/dp1'] ?? 0) > 10)
      await until(async () => ((await held(stack as Stack, b))['sim-pod-0/dp0'] ?? 0) > 10)
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
      stack = await startStack()
      const [pod] = stack.pods as [SimPod]
      const busy = new AbortController()
      const long = direct(pod, chat(words(33, 50), 'go on', { max_tokens: 20_000 }), 1, busy.signal)
      long.catch(() => {})
      try {
        await until(async () => {
          const reports = await podReports(stack as Stack)
          const running = (name: string) =>
            reports.find((r) => r.name === name)?.metrics?.running ?? -1
          return running('sim-pod-0/dp1') === 1 && running('sim-pod-0/dp0') === 0
        })
      } finally {
        busy.abort()
      }
      const reports = await podReports(stack)
      expect(reports.map((r) => [r.name, r.endpoint.dataParallelRank])).toEqual([
        ['sim-pod-0/dp0', 0],
        ['sim-pod-0/dp1', 1],
      ])
    })
  },
)
