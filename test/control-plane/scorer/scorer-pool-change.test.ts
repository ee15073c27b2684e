import { describe, expect, it } from 'vitest'
import type { SimPod } from '../../../control-plane/lab/sim/sim-pod.ts'
import type { PoolRuntime } from '../../../control-plane/scorer/pools/pool-runtime.ts'
import {
  adminPods,
  decisionOf,
  fetchSigned,
  indexedBlocks,
  model,
  poolSpec,
  type Stack,
  send,
  until,
  words,
} from '../../support/scorer-stack.ts'
import { chat as askPod } from '../../support/sim-pods.ts'
import { snapshotOf, startFromSnapshot, startPods } from '../../support/snapshot-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// A pool whose spec changes gets a new runtime for new requests; the requests that started
// on the old one finish there, and the old one closes once they are done, without taking
// the pods' KV-event feeds or index entries with it.

const stacks = useScorerStacks()

const chat = (seed: number, tokens: number, extra: object = {}) => ({
  model,
  messages: [{ role: 'user', content: words(seed, Math.round(tokens / 6.8)) }],
  max_tokens: 4,
  ignore_eos: true,
  ...extra,
})

const podOf = (pods: readonly SimPod[], name: string | undefined) => {
  const pod = pods.find((p) => p.config.podName === name)
  if (!pod) throw new Error(`no pod ${name}`)
  return pod
}

const inFlight = (runtime: PoolRuntime, pod: string) =>
  runtime.router.podReports(performance.now()).find((r) => r.name === pod)?.load.inFlight ?? 0

function soleRuntime(s: Stack): PoolRuntime {
  const [runtime] = s.scorer.pools
  if (!runtime) throw new Error('no pool')
  return runtime
}

describe('a pool’s spec changed by a snapshot', () => {
  it('new requests take the new strategy; a stream on the old runtime finishes there', async () => {
    const pods = await startPods(2)
    const initial = await snapshotOf([{ name: 'default', pods }])
    const s = stacks.closing(await startFromSnapshot(pods, initial))
    const old = soleRuntime(s)
    const long = chat(5, 600, { max_tokens: 200, stream: true })
    // A signed streaming request, its body left to read.
    const response = await fetchSigned(s, '/v1/chat/completions', long)
    expect(response.status).toBe(200)
    const decision = decisionOf(response.headers)
    expect(decision.strategy).toBe('kinference')
    const pod = podOf(pods, decision.pod)
    const reader = response.body?.getReader()
    if (!reader) throw new Error('no body')
    const first = await reader.read()
    expect(first.done).toBe(false)
    // The stream stays in flight while the new config is applied.
    pod.setFaults({ paused: true })

    const report = await s.scorer.applySnapshot(
      await snapshotOf([
        {
          name: 'default',
          spec: poolSpec({ routing: { strategy: 'round-robin' } } as never),
          pods,
        },
      ]),
    )
    expect(report).toMatchObject({
      outcome: 'applied',
      pools: { added: [], removed: [], changed: ['test/default'] },
      pods: { added: [], removed: [], changed: [] },
    })
    const current = soleRuntime(s)
    expect(current).not.toBe(old)
    expect(s.scorer.draining).toEqual([old])
    expect(old.closed).toBe(false)
    expect(inFlight(old, pod.config.podName)).toBe(1)
    expect(inFlight(current, pod.config.podName)).toBe(0)
    expect((await adminPods(s)).pools.map((pool) => pool.strategy)).toEqual(['round-robin'])

    pod.setFaults({ paused: false })
    let text = new TextDecoder().decode(first.value)
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      text += new TextDecoder().decode(chunk.value)
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
    expect(text).toContain('"finish_reason":"length"')

    const served = new Set<string | undefined>()
    for (let i = 0; i < 4; i++) {
      const answer = await send(s, '/v1/chat/completions', chat(5, 600))
      expect(answer.status).toBe(200)
      expect(decisionOf(answer.headers).strategy).toBe('round-robin')
      served.add(decisionOf(answer.headers).pod)
    }
    expect(served.size).toBe(2)
    // Drained, the old runtime closes; the pods' feeds and index entries stay.
    await until(() => s.scorer.draining.length === 0)
    expect(old.closed).toBe(true)
    expect(inFlight(current, pod.config.podName)).toBe(0)
    expect(current.ingestorCounters(pod.config.podName)).not.toBeNull()
    expect(await indexedBlocks(s, pod.config.podName, long)).toBeGreaterThan(20)
    const fresh = chat(6, 2_000)
    expect((await askPod(pod, fresh)).status).toBe(200)
    await until(async () => (await indexedBlocks(s, pod.config.podName, fresh)) > 20)
  })

  it('a request held by late binding on the old runtime is still served', async () => {
    // A step budget of 256 tokens: one queued prompt of ~600 makes a pod "busy", so a
    // request is held while every pod has one in flight (see scorer-pod-removal.test.ts).
    const holding = (ttftSloMs: number) =>
      poolSpec({
        ttftSloMs,
        scheduler: { maxNumBatchedTokens: 256 },
        routing: { strategy: 'kinference', kinference: { lateBinding: true } },
      } as never)
    const pods = await startPods(2)
    const initial = await snapshotOf([{ name: 'default', spec: holding(60_000), pods }])
    const s = stacks.closing(await startFromSnapshot(pods, initial))
    const old = soleRuntime(s)
    for (const pod of pods) pod.setFaults({ paused: true })
    const fills: Promise<unknown>[] = []
    const busy = () => pods.filter((p) => inFlight(old, p.config.podName) > 0).length
    for (let i = 0; i < 8 && busy() < pods.length; i++) {
      fills.push(send(s, '/v1/chat/completions', chat(100 + i, 600)))
      const before = busy() + old.admission.held
      await until(() => busy() + old.admission.held > before)
    }
    expect(busy()).toBe(pods.length)
    const heldBefore = old.admission.held
    const target = send(s, '/v1/chat/completions', chat(200, 600))
    await until(() => old.admission.held === heldBefore + 1)

    const report = await s.scorer.applySnapshot(
      await snapshotOf([{ name: 'default', spec: holding(30_000), pods }]),
    )
    expect(report).toMatchObject({ outcome: 'applied', pools: { changed: ['test/default'] } })
    expect(soleRuntime(s).admission.held).toBe(0)
    expect(s.scorer.draining).toEqual([old])
    for (const pod of pods) pod.setFaults({ paused: false })
    const answer = await target
    await Promise.all(fills)
    expect(answer.status).toBe(200)
    expect(Number(decisionOf(answer.headers).held_ms)).toBeGreaterThan(0)
    await until(() => s.scorer.draining.length === 0)
    expect(old.closed).toBe(true)
  })
})
