import { describe, expect, it } from 'vitest'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import {
  decisionOf,
  lookup,
  matchedBlocks,
  model,
  poolSpec,
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

describe.each(['memory', 'redis'] as const)(
  'the scorer in front of simulated pods (%s index)',
  (backend) => {
    const startStack = (options: Parameters<typeof stacks.start>[0] = {}) =>
      stacks.start({ ...options, ...indexOptions(backend) })

    it('sends a repeated prefix to the pod that holds it', async () => {
      const stack = await startStack()
      const system = words(1, 500)
      const first = await send(stack, '/v1/chat/completions', chat(system, 'first question'))
      expect(first.status).toBe(200)
      const warm = decisionOf(first.headers).pod as string
      const messages = chat(system, 'second question').messages
      await until(async () => (await matchedBlocks(stack, { model, messages }, warm)) > 10)
      for (const question of ['second question', 'third question', 'fourth question']) {
        const again = await send(stack, '/v1/chat/completions', chat(system, question))
        expect(decisionOf(again.headers).pod).toBe(warm)
        expect(Number(decisionOf(again.headers).matched_tokens)).toBeGreaterThan(1000)
        const usage = JSON.parse(again.text).usage
        expect(usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(1000)
      }
    })

    it('spills a hot prefix to a second pod when the first is busy', async () => {
      // Without late binding: holding would keep the warm pod's own queue short, so it
      // stays the best choice and the burst waits for it in the scorer instead of spilling
      // (see scorer-late-binding.test.ts for holding).
      const stack = await startStack({
        spec: poolSpec({
          routing: { strategy: 'kinference', kinference: { lateBinding: false } },
        } as never),
      })
      const system = words(2, 1000)
      await send(stack, '/v1/chat/completions', chat(system, 'warm up'))
      // Each request brings ~3,000 new tokens: the warm pod's queue grows until a cold pod
      // with the whole prompt to compute is predicted faster.
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          send(
            stack,
            '/v1/chat/completions',
            chat(system, words(100 + i, 600), { max_tokens: 16 }),
          ),
        ),
      )
      expect(answers.every((a) => a.status === 200)).toBe(true)
      const used = new Set(answers.map((a) => decisionOf(a.headers).pod))
      expect(used.size).toBeGreaterThanOrEqual(2)
      // The pods it spilled to became warm for the prefix as well.
      const messages = chat(system, 'later').messages
      await until(
        async () =>
          (await lookup(stack, { model, messages })).pods.filter((p) => p.matchedBlocks > 50)
            .length >= 2,
      )
    })

    it('treats a restarted pod as cold', async () => {
      const stack = await startStack()
      const system = words(3, 500)
      const first = await send(stack, '/v1/chat/completions', chat(system, 'question'))
      const warm = decisionOf(first.headers).pod as string
      const messages = chat(system, 'next').messages
      const matched = () => matchedBlocks(stack, { model, messages }, warm)
      await until(async () => (await matched()) > 10)
      const pod = stack.pods.find((p) => p.config.podName === warm)
      // The scorer has read the pod's metrics (its process start time) before it restarts.
      await until(
        () =>
          stack.scorer.pools[0]?.router
            .podReports(performance.now())
            .every((r) => r.metrics !== null) ?? false,
      )
      await fetch(`${pod?.url}/admin/restart`, { method: 'POST' })
      // Its metrics counters restart at 0 (and its next events at seq 0): the scorer forgets it.
      await until(async () => (await matched()) === 0)
      expect(stack.scorer.pools[0]?.ingestorCounters(warm)?.restarts).toBeGreaterThanOrEqual(1)
    })

    it('repairs an event gap by replay', async () => {
      // No speculative entries: what the index holds here came from the pod's events only.
      const stack = await startStack({
        pods: 1,
        spec: poolSpec({
          routing: { strategy: 'kinference', kinference: { speculativeTtlMs: 0 } } as never,
        }),
      })
      const pod = stack.pods[0]
      const held = async (messages: object[]) =>
        (await lookup(stack, { model, messages })).pods[0]?.matchedBlocks ?? 0
      const warmUp = chat(words(7, 300), 'live').messages
      await send(stack, '/v1/chat/completions', { model, messages: warmUp, max_tokens: 1 })
      await until(async () => (await held(warmUp)) > 10)
      const lost = chat(words(4, 300), 'lost').messages
      await fetch(`${pod?.url}/admin/faults`, {
        method: 'POST',
        body: JSON.stringify({ dropEventRate: 1 }),
      })
      await send(stack, '/v1/chat/completions', { model, messages: lost, max_tokens: 1 })
      await fetch(`${pod?.url}/admin/faults`, {
        method: 'POST',
        body: JSON.stringify({ dropEventRate: 0 }),
      })
      expect(await held(lost)).toBe(0)
      // The next batch shows the gap; the missing one comes back through the replay socket.
      await send(stack, '/v1/chat/completions', chat(words(5, 50), 'next', { max_tokens: 1 }))
      await until(async () => (await held(lost)) > 10)
      const events = stack.scorer.pools[0]?.ingestorCounters('sim-pod-0')
      expect(events?.gaps).toBeGreaterThanOrEqual(1)
      expect(events?.replays).toBeGreaterThanOrEqual(2)
    })

    it('answers "saturated" at once when every pod is over the SLO and the edge may burst', async () => {
      const stack = await startStack({ spec: poolSpec({ ttftSloMs: 0.001 }) })
      const saturated = await send(stack, '/v1/chat/completions', chat('s', 'q'), {
        allowBurst: true,
      })
      expect(saturated.status).toBe(503)
      expect(saturated.headers.get('x-kinference-saturated')).toBe('1')
      expect(JSON.parse(saturated.text).error.type).toBe('saturated')
      const queued = await send(stack, '/v1/chat/completions', chat('s', 'q'))
      expect(queued.status).toBe(200)
    })

    it('retries once on the next pod when the chosen one is down', async () => {
      const stack = await startStack({ pods: 2 })
      const system = words(6, 400)
      const first = await send(stack, '/v1/chat/completions', chat(system, 'q1'))
      const warm = decisionOf(first.headers).pod as string
      const messages = chat(system, 'q2').messages
      await until(async () => (await matchedBlocks(stack, { model, messages }, warm)) > 10)
      await stack.pods.find((p) => p.config.podName === warm)?.kill(null)
      const retried = await send(stack, '/v1/chat/completions', chat(system, 'q2'))
      expect(retried.status).toBe(200)
      expect(decisionOf(retried.headers).pod).not.toBe(warm)
    })
  },
)
