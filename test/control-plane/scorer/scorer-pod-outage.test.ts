import { afterEach, describe, expect, it } from 'vitest'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import {
  adminToken,
  decisionOf,
  lookup,
  model,
  type Stack,
  send,
  startStack,
  until,
  words,
} from '../../support/scorer-stack.ts'

// A pod whose process dies: the scorer learns it from its metrics scrapes failing, not from
// a request (none is sent while it is down), takes it out of routing and drops its index
// entries; when it answers again (a new process, same address), it is routed again and
// its index is what the new process holds.

const { uniquePrefix } = useRedisTestNamespaces()

let stack: Stack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

const chat = (system: string, question: string) => ({
  model,
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: question },
  ],
  max_tokens: 4,
})

async function podReport(s: Stack, name: string) {
  const response = await fetch(`${s.scorer.url}/admin/pods`, {
    headers: { authorization: `Bearer ${adminToken}` },
  })
  const report = (await response.json()) as {
    pools: { pods: { name: string; healthy: boolean; events: { restarts: number } | null }[] }[]
  }
  return report.pools.flatMap((pool) => pool.pods).find((pod) => pod.name === name)
}

async function matchedBlocks(s: Stack, name: string, messages: object[]): Promise<number> {
  const view = await lookup(s, { model, messages })
  return view.pods.find((pod) => pod.pod === name)?.matchedBlocks ?? 0
}

describe.each([
  ['in memory', () => null],
  ['in Redis', () => redisUrl],
])('a pod that stops answering (index %s)', (_, indexUrl) => {
  it('is out of routing with its entries dropped, logged once; back, it is routed cold', async () => {
    const logged: string[] = []
    stack = await startStack({
      pods: 2,
      redisUrl: indexUrl(),
      redisPrefix: uniquePrefix(),
      log: (message) => logged.push(message),
    })
    const s = stack
    const system = words(11, 400)
    const first = await send(s, '/v1/chat/completions', chat(system, 'q1'))
    const victimName = decisionOf(first.headers).pod as string
    const victim = s.pods.find((pod) => pod.config.podName === victimName)
    if (!victim) throw new Error(`no pod ${victimName}`)
    const { messages } = chat(system, 'q2')
    await until(async () => (await matchedBlocks(s, victimName, messages)) > 10)

    await victim.kill(null)
    await until(async () => (await podReport(s, victimName))?.healthy === false)
    await until(async () => (await matchedBlocks(s, victimName, messages)) === 0)
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
    expect(await matchedBlocks(s, victimName, messages)).toBe(0)
    // What it caches from now on is indexed. The first batches may be published before
    // the scorer's subscription has reconnected (ZMQ); a later one shows the gap, replayed.
    let question = 4
    await until(async () => {
      const direct = await fetch(`${victim.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(chat(system, `q${question++}`)),
      })
      expect(direct.status).toBe(200)
      await direct.text()
      await new Promise((resolve) => setTimeout(resolve, 100))
      return (await matchedBlocks(s, victimName, messages)) > 10
    })
  })
})
