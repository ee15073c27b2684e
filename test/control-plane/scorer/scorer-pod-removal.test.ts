import { describe, expect, it } from 'vitest'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import {
  adminPods,
  decisionOf,
  matchedBlocks,
  model,
  poolSpec,
  type Stack,
  send,
  until,
  words,
} from '../../support/scorer-stack.ts'
import { chat as askPod } from '../../support/sim-pods.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// A pod leaving the pool while a request is between its index lookup and its routing must
// not shift the index's answer onto another pod: each pod is credited with its own blocks.
// The check is the pod's own word: the cached tokens the chosen pod reports must be what
// the scorer believed it held (x-kinference-decision matched_tokens).

const { uniquePrefix } = useRedisTestNamespaces()
const stacks = useScorerStacks()

const prompt = (seed: number, tokens: number) => ({
  model,
  messages: [{ role: 'user', content: words(seed, Math.round(tokens / 6.8)) }],
  max_tokens: 4,
  ignore_eos: true,
})

/** Sends `body` straight to pod `i` (not through the scorer): only its KV events tell the index. */
async function warmDirectly(s: Stack, i: number, body: ReturnType<typeof prompt>): Promise<void> {
  const pod = s.pods[i]
  if (!pod) throw new Error(`no pod ${i}`)
  expect((await askPod(pod, body)).status).toBe(200)
  const probe = { model, messages: body.messages }
  await until(async () => (await matchedBlocks(s, probe, pod.config.podName)) > 20)
}

/** The pool's pods in the scorer's order, requests held, and pods with one in flight. */
async function poolState(s: Stack) {
  const pool = (await adminPods(s)).pools[0]
  if (!pool) throw new Error('no pool')
  return {
    names: pool.pods.map((pod) => pod.name),
    held: pool.lateBinding.held,
    busy: pool.pods.filter((pod) => pod.load.inFlight > 0).length,
  }
}

/** The scorer's belief about the chosen pod, and what that pod says it had cached. */
function credit(answer: { headers: Headers; text: string }) {
  const decision = decisionOf(answer.headers)
  const usage = JSON.parse(answer.text).usage as {
    prompt_tokens_details?: { cached_tokens?: number }
  }
  return {
    pod: decision.pod,
    believed: Number(decision.matched_tokens),
    reported: usage.prompt_tokens_details?.cached_tokens ?? 0,
  }
}

describe('a pod removed mid-request', () => {
  it('while the Redis lookup is pending: the other pods keep their own blocks', async () => {
    const s = await stacks.start({ pods: 3, redisUrl, redisPrefix: uniquePrefix() })
    const body = prompt(300, 2_000)
    await warmDirectly(s, 1, body)
    const [first] = (await poolState(s)).names
    if (first === undefined) throw new Error('no pods')
    // Hold the index's answer until the first pod has left the pool.
    const index = s.scorer.index
    const lookupOnce = index.lookup.bind(index)
    let removeFirst = true
    index.lookup = async (...args) => {
      const held = await lookupOnce(...args)
      if (removeFirst) {
        removeFirst = false
        await s.scorer.removePod(first)
      }
      return held
    }
    const answer = await send(s, '/v1/chat/completions', body)
    expect(answer.status).toBe(200)
    expect(removeFirst).toBe(false)
    const seen = credit(answer)
    expect(seen.pod).not.toBe(first)
    expect(seen.believed).toBe(seen.reported)
  })

  it('while the request is held by late binding: released, it is credited correctly', async () => {
    // A step budget of 256 tokens: one queued prompt of ~600 makes a pod "busy" (two
    // steps of prefill ahead), so a request is held while every pod has one in flight.
    const s = await stacks.start({
      pods: 3,
      spec: poolSpec({
        scheduler: { maxNumBatchedTokens: 256 },
        routing: { strategy: 'kinference', kinference: { lateBinding: true } },
      } as never),
    })
    const body = prompt(400, 2_000)
    await warmDirectly(s, 1, body)
    const [first] = (await poolState(s)).names
    if (first === undefined) throw new Error('no pods')
    for (const pod of s.pods) pod.setFaults({ paused: true })
    const fills: Promise<unknown>[] = []
    for (let i = 0; i < 12 && (await poolState(s)).busy < 3; i++) {
      const before = await poolState(s)
      fills.push(send(s, '/v1/chat/completions', prompt(500 + i, 600)))
      await until(async () => {
        const now = await poolState(s)
        return now.busy > before.busy || now.held > before.held
      })
    }
    expect((await poolState(s)).busy).toBe(3)
    const heldBefore = (await poolState(s)).held
    const target = send(s, '/v1/chat/completions', body)
    await until(async () => (await poolState(s)).held === heldBefore + 1)
    await s.scorer.removePod(first)
    for (const pod of s.pods) pod.setFaults({ paused: false })
    const answer = await target
    await Promise.all(fills)
    expect(answer.status).toBe(200)
    const seen = credit(answer)
    expect(seen.pod).not.toBe(first)
    expect(seen.believed).toBe(seen.reported)
  })
})
