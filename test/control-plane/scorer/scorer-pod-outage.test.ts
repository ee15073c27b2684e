import { describe, expect, it } from 'vitest'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import {
  adminPods,
  decisionOf,
  matchedBlocks,
  model,
  type Stack,
  send,
  systemChat,
  until,
  words,
} from '../../support/scorer-stack.ts'
import { chat as askPod } from '../../support/sim-pods.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// A pod whose process dies: the scorer learns it from its metrics scrapes failing, not from
// a request (none is sent while it is down), takes it out of routing and drops its index
// entries; when it answers again (a new process, same address), it is routed again and
// its index is what the new process holds.

const { uniquePrefix } = useRedisTestNamespaces()
const stacks = useScorerStacks()

const chat = (system: string, question: string) => systemChat(system, question)

async function podReport(s: Stack, name: string) {
  const report = await adminPods(s)
  return report.pools.flatMap((pool) => pool.pods).find((pod) => pod.name === name)
}

describe.each([
  ['in memory', () => null],
  ['in Redis', () => redisUrl],
])('a pod that stops answering (index %s)', (_, indexUrl) => {
  it('is out of routing with its entries dropped, logged once; back, it is routed cold', async () => {
    const logged: string[] = []
    const s = await stacks.start({
      pods: 2,
      redisUrl: indexUrl(),
      redisPrefix: uniquePrefix(),
      log: (message) => logged.push(message),
    })
    const system = words(11, 400)
    const first = await send(s, '/v1/chat/completions', chat(system, 'q1'))
    const victimName = decisionOf(first.headers).pod as string
    const victim = s.pods.find((pod) => pod.config.podName === victimName)
    if (!victim) throw new Error(`no pod ${victimName}`)
    const { messages } = chat(system, 'q2')
    const matched = () => matchedBlocks(s, { model, messages }, victimName)
    await until(async () => (await matched()) > 10)

    await victim.kill(null)
    await until(async () => (await podReport(s, victimName))?.healthy === false)
    await until(async () => (await matched()) === 0)
    // Many scrapes failed meanwhile (every 100 ms); the outage is told once.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(logged.filter((line) => line.startsWith(`${victimName} does not answer`))).toHaveLength(
      1,
    )
    const during = await send(s, '/v1/chat/completions', chat(system, 'q3'))
    expect(during.status).toBe(200)
    expect(decisionOf(during.headers).pod).not.toBe(victimName)

    const restartsBefore = (await podReport(s, victimName))?.events?.restarts ?? 0
    await victim.start()
    await until(async () => (await podReport(s, victimName))?.healthy === true)
    await until(
      async () => ((await podReport(s, victimName))?.events?.restarts ?? 0) > restartsBefore,
    )
    expect(logged.filter((line) => line.startsWith(`${victimName} answers again`))).toHaveLength(1)
    // The new process holds nothing of the old one's cache, and the index says so.
    expect(await matched()).toBe(0)
    // What it caches from now on is indexed. The first batches may be published before
    // the scorer's subscription has reconnected (ZMQ); a later one shows the gap, replayed.
    let question = 4
    await until(async () => {
      expect((await askPod(victim, chat(system, `q${question++}`))).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 100))
      return (await matched()) > 10
    })
  })
})
