import { describe, expect, it } from 'vitest'
import type { SimPod } from '../../../control-plane/lab/sim/sim-pod.ts'
import type { EdgeClaims } from '../../../shared/auth/edge-signature.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import {
  adminPods,
  decisionOf,
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

// The scorer follows config snapshots while it runs: the endpoints are its pods, the
// pools its runtimes, the backends what the edge's allowed-backends claim points at.

const { indexOptions } = useRedisTestNamespaces()
const stacks = useScorerStacks()

const roundRobin = poolSpec({ routing: { strategy: 'round-robin' } } as never)

const messages = (seed: number, tokens: number) => [
  { role: 'user', content: words(seed, Math.round(tokens / 6.8)) },
]
const chat = (seed: number, tokens = 400) => ({
  model,
  messages: messages(seed, tokens),
  max_tokens: 2,
  ignore_eos: true,
})

/** The first `count` pods, each named. */
function pick(pods: readonly SimPod[], count: 2): [SimPod, SimPod]
function pick(pods: readonly SimPod[], count: 3): [SimPod, SimPod, SimPod]
function pick(pods: readonly SimPod[], count: number): SimPod[] {
  if (pods.length < count) throw new Error(`only ${pods.length} pods`)
  return pods.slice(0, count)
}

const nameOf = (pod: SimPod) => pod.config.podName

/** The prompt's leading blocks the index holds for `pod` (stored or speculative). */
const blocksOf = (s: Stack, pod: string, seed: number) => indexedBlocks(s, pod, chat(seed, 2_000))

/** Sends the prompt straight to `pod`: only its KV events tell the index. */
async function warmDirectly(s: Stack, pod: SimPod, seed: number): Promise<void> {
  expect((await askPod(pod, chat(seed, 2_000))).status).toBe(200)
  await until(async () => (await blocksOf(s, nameOf(pod), seed)) > 20)
}

async function podNames(s: Stack): Promise<string[]> {
  const report = await adminPods(s)
  return report.pools.flatMap((pool) => pool.pods.map((pod) => pod.name))
}

/** The answer's status, and the pool and pod the decision header names. */
async function servedBy(s: Stack, seed: number, claims: Partial<EdgeClaims> = {}) {
  const answer = await send(s, '/v1/chat/completions', chat(seed), claims)
  const { pool, pod } = decisionOf(answer.headers)
  return { status: answer.status, pool, pod }
}

describe.each(['memory', 'redis'] as const)('applySnapshot, %s index', (kind) => {
  it('a new endpoint gets requests; a removed one none, and none of its blocks stay indexed', async () => {
    const pods = await startPods(3)
    const [p0, p1, p2] = pick(pods, 3)
    const first = await snapshotOf([{ name: 'default', spec: roundRobin, pods: [p0, p1] }])
    const s = stacks.closing(await startFromSnapshot(pods, first, indexOptions(kind)))
    expect(s.scorer.snapshotHash).toBe(first.hash)
    await warmDirectly(s, p1, 1)
    const next = await snapshotOf([{ name: 'default', spec: roundRobin, pods: [p0, p2] }])
    const report = await s.scorer.applySnapshot(next)
    expect(report).toMatchObject({
      outcome: 'applied',
      hash: next.hash,
      pools: { added: [], removed: [], changed: [] },
      pods: { added: [nameOf(p2)], removed: [nameOf(p1)], changed: [] },
      backendsChanged: false,
    })
    // Within the call: out of the router and out of the index.
    expect(await blocksOf(s, nameOf(p1), 1)).toBe(0)
    expect(await podNames(s)).toEqual([nameOf(p0), nameOf(p2)])
    const served = new Set<string | undefined>()
    for (let i = 0; i < 6; i++) {
      const answer = await servedBy(s, 1)
      expect(answer.status).toBe(200)
      served.add(answer.pod)
    }
    expect(served).toEqual(new Set([nameOf(p0), nameOf(p2)]))
    // The new pod's KV events reach the index.
    await warmDirectly(s, p2, 4)
  })
})

describe('applySnapshot', () => {
  it('adds and removes pools; the backends follow for the edge’s allowed-backends claim', async () => {
    const pods = await startPods(2)
    const [p0, p1] = pick(pods, 2)
    const alpha = await snapshotOf([{ name: 'alpha', pods: [p0] }])
    const s = stacks.closing(await startFromSnapshot(pods, alpha))
    expect(await servedBy(s, 2, { backends: ['alpha-local'] })).toMatchObject({
      status: 200,
      pool: 'alpha',
      pod: nameOf(p0),
    })
    expect((await servedBy(s, 2, { backends: ['beta-local'] })).status).toBe(403)

    const next = await snapshotOf([{ name: 'beta', pods: [p1] }])
    expect(await s.scorer.applySnapshot(next)).toMatchObject({
      outcome: 'applied',
      pools: { added: ['test/beta'], removed: ['test/alpha'], changed: [] },
      pods: { added: [nameOf(p1)], removed: [nameOf(p0)] },
      backendsChanged: true,
    })
    expect(s.scorer.pools.map((pool) => pool.id)).toEqual(['test/beta'])
    expect(await servedBy(s, 2, { backends: ['beta-local'] })).toMatchObject({
      status: 200,
      pool: 'beta',
      pod: nameOf(p1),
    })
    expect((await servedBy(s, 2, { backends: ['alpha-local'] })).status).toBe(403)
    // Nothing was in flight on alpha: it closes at once.
    await until(() => s.scorer.draining.length === 0)
  })

  it('applies one call after the other, and the same snapshot twice is a no-op', async () => {
    const pods = await startPods(3)
    const [p0, p1, p2] = pick(pods, 3)
    const first = await snapshotOf([{ name: 'default', pods: [p0] }])
    const s = stacks.closing(await startFromSnapshot(pods, first))
    const second = await snapshotOf([{ name: 'default', pods: [p0, p1] }])
    const third = await snapshotOf([{ name: 'default', pods: [p0, p2] }])
    const [a, b, again] = await Promise.all([
      s.scorer.applySnapshot(second),
      s.scorer.applySnapshot(third),
      s.scorer.applySnapshot(third),
    ])
    expect(a).toMatchObject({ outcome: 'applied', pods: { added: [nameOf(p1)], removed: [] } })
    // Planned against the second snapshot, so applied after it.
    expect(b).toMatchObject({
      outcome: 'applied',
      pods: { added: [nameOf(p2)], removed: [nameOf(p1)] },
    })
    expect(again).toEqual({ outcome: 'unchanged', hash: third.hash })
    expect(s.scorer.snapshotHash).toBe(third.hash)
    expect(await podNames(s)).toEqual([nameOf(p0), nameOf(p2)])
  })

  it('refuses a snapshot it cannot serve, and keeps the previous config', async () => {
    const pods = await startPods(2)
    const [p0, p1] = pick(pods, 2)
    const first = await snapshotOf([{ name: 'default', pods: [p0, p1] }])
    const s = stacks.closing(await startFromSnapshot(pods, first))
    // A pool whose tokenizer cannot be loaded is not a reason to refuse it (see
    // scorer-tokenizer-degraded.test.ts); a pod listed by two pools is.
    const twice = await s.scorer.applySnapshot(
      await snapshotOf([
        { name: 'default', pods: [p0] },
        { name: 'other', pods: [p0] },
      ]),
    )
    expect(twice.outcome === 'refused' && twice.reason).toMatch(/listed by pools/)
    expect(s.scorer.snapshotHash).toBe(first.hash)
    expect(await podNames(s)).toEqual([nameOf(p0), nameOf(p1)])
    expect((await servedBy(s, 3)).status).toBe(200)
  })
})
