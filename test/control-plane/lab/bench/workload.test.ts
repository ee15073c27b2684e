import { beforeAll, describe, expect, it } from 'vitest'
import { parseDataSpec } from '../../../../control-plane/lab/bench/data-spec.ts'
import {
  createWorkload,
  type PlannedConversation,
  randomWords,
} from '../../../../control-plane/lab/bench/workload.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'

let assets: ReturnType<typeof loadSimModelAssets>

beforeAll(() => {
  assets = loadSimModelAssets()
})

const workloadOf = (data: string, seed = 42) =>
  createWorkload(parseDataSpec(data), seed, assets.vocabulary)

const conversations = (data: string, count: number, seed = 42): PlannedConversation[] => {
  const workload = workloadOf(data, seed)
  return Array.from({ length: count }, (_, i) => workload.conversation(i))
}

describe('randomWords', () => {
  it('gives count ids of stable words: the first without a space, the others with one', () => {
    const words = assets.vocabulary.words
    const initial = new Set(words.map((w) => w.initialId))
    const spaced = new Set(words.map((w) => w.id))
    const ids = randomWords(assets.vocabulary, 50, createSeededRandom(1))
    expect(ids).toHaveLength(50)
    expect(initial.has(ids[0] as number)).toBe(true)
    for (const id of ids.slice(1)) expect(spaced.has(id)).toBe(true)
  })

  it('round-trips through text: encode(decode(ids)) gives the ids back', () => {
    const { tokenizer, vocabulary } = assets
    for (let seed = 0; seed < 20; seed++) {
      const ids = randomWords(vocabulary, 64, createSeededRandom(seed))
      expect(tokenizer.encode(tokenizer.decode(ids))).toEqual(ids)
    }
  })

  it('gives an empty list for no words', () => {
    expect(randomWords(assets.vocabulary, 0, createSeededRandom(1))).toEqual([])
  })
})

describe('createWorkload: determinism', () => {
  const data =
    'prefix_count=4,prefix_tokens=64,prompt_tokens=32,prompt_tokens_stdev=8,output_tokens=16,output_tokens_min=4,output_tokens_max=40,turns=3'

  it('gives the same plan for the same seed and index, in any order of asking', () => {
    const a = workloadOf(data)
    const b = workloadOf(data)
    const forward = [0, 1, 2, 3, 17].map((i) => a.conversation(i))
    const backward = [17, 3, 2, 1, 0].map((i) => b.conversation(i)).reverse()
    expect(backward).toEqual(forward)
    expect(a.conversation(3)).toEqual(forward[3])
    expect(forward[4]?.index).toBe(17)
  })

  it('gives different plans for different seeds and for different indices', () => {
    const seed42 = workloadOf(data, 42).conversation(5)
    const seed43 = workloadOf(data, 43).conversation(5)
    expect(seed43.turns[0]?.userIds).not.toEqual(seed42.turns[0]?.userIds)
    expect(workloadOf(data, 42).conversation(6).turns[0]?.userIds).not.toEqual(
      seed42.turns[0]?.userIds,
    )
  })

  it('generates different prefixes for different seeds', () => {
    const prefixes = (seed: number) =>
      conversations(data, 40, seed)
        .map((c) => c.prefix)
        .filter((p) => p !== null)
    const mine = new Set(prefixes(42).map((p) => p.ids.join(',')))
    for (const other of prefixes(7)) expect(mine.has(other.ids.join(','))).toBe(false)
  })
})

describe('createWorkload: prefixes', () => {
  it('draws buckets by weight, then a prefix of the bucket uniformly', () => {
    const data = JSON.stringify({
      prompt_tokens: 4,
      output_tokens: 1,
      prefix_buckets: [
        { bucket_weight: 60, prefix_count: 1, prefix_tokens: 8 },
        { bucket_weight: 30, prefix_count: 3, prefix_tokens: 8 },
        { bucket_weight: 10, prefix_count: 1, prefix_tokens: 8 },
      ],
    })
    const n = 6000
    const counts = new Map<string, number>()
    for (const c of conversations(data, n)) {
      const key = c.prefix?.key ?? 'none'
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
    expect([...counts.keys()].sort()).toEqual(['b0p0', 'b1p0', 'b1p1', 'b1p2', 'b2p0'])
    const share = (...keys: string[]) => keys.reduce((sum, k) => sum + (counts.get(k) ?? 0), 0) / n
    // Standard errors are ≤ 0.0065; these bounds are ≥ 4 of them.
    expect(Math.abs(share('b0p0') - 0.6)).toBeLessThan(0.03)
    expect(Math.abs(share('b1p0', 'b1p1', 'b1p2') - 0.3)).toBeLessThan(0.03)
    expect(Math.abs(share('b2p0') - 0.1)).toBeLessThan(0.02)
    for (const key of ['b1p0', 'b1p1', 'b1p2'])
      expect(Math.abs(share(key) - 0.1)).toBeLessThan(0.02)
  })

  it('leaves conversations of a bucket with 0 tokens without a prefix, at its weight', () => {
    const data = JSON.stringify({
      prompt_tokens: 4,
      output_tokens: 1,
      prefix_buckets: [
        { bucket_weight: 75, prefix_count: 2, prefix_tokens: 16 },
        { bucket_weight: 25, prefix_count: 1, prefix_tokens: 0 },
      ],
    })
    const n = 4000
    const without = conversations(data, n).filter((c) => c.prefix === null).length / n
    expect(Math.abs(without - 0.25)).toBeLessThan(0.03)
  })

  it('has no prefix without buckets, or with prefix_count alone (0 tokens)', () => {
    for (const data of [
      'prompt_tokens=8,output_tokens=1',
      'prompt_tokens=8,output_tokens=1,prefix_count=4',
    ]) {
      expect(conversations(data, 50).every((c) => c.prefix === null)).toBe(true)
    }
  })

  it('gives every conversation drawing a prefix the same ids, of the bucket’s length', () => {
    const data = 'prefix_count=3,prefix_tokens=200,prompt_tokens=16,output_tokens=4'
    const byKey = new Map<string, readonly number[]>()
    for (const c of conversations(data, 300)) {
      expect(c.prefix).not.toBeNull()
      const prefix = c.prefix as NonNullable<PlannedConversation['prefix']>
      expect(prefix.ids).toHaveLength(200)
      const seen = byKey.get(prefix.key)
      if (seen) expect(prefix.ids).toEqual(seen)
      else byKey.set(prefix.key, prefix.ids)
    }
    expect([...byKey.keys()].sort()).toEqual(['b0p0', 'b0p1', 'b0p2'])
    const distinct = new Set([...byKey.values()].map((ids) => ids.slice(0, 16).join(',')))
    expect(distinct.size).toBe(3)
  })

  it('gives the same prefixes to workloads of the same seed and spec', () => {
    const data = 'prefix_count=2,prefix_tokens=32,prompt_tokens=16,output_tokens=4'
    const a = new Map(conversations(data, 20).map((c) => [c.prefix?.key, c.prefix?.ids]))
    const b = new Map(conversations(data, 20).map((c) => [c.prefix?.key, c.prefix?.ids]))
    expect(b).toEqual(a)
  })
})

describe('createWorkload: turns and lengths', () => {
  it('gives every turn exactly the constant lengths, the first turn its own', () => {
    const data =
      'turns=4,prompt_tokens=24,output_tokens=12,first_prompt_tokens=100,first_output_tokens=7'
    for (const c of conversations(data, 30)) {
      expect(c.turns.map((t) => t.userIds.length)).toEqual([100, 24, 24, 24])
      expect(c.turns.map((t) => t.outputTokens)).toEqual([7, 12, 12, 12])
    }
  })

  it('uses prompt_tokens and output_tokens for the first turn when no first_ lengths are given', () => {
    for (const c of conversations('turns=2,prompt_tokens=24,output_tokens=12', 10)) {
      expect(c.turns.map((t) => [t.userIds.length, t.outputTokens])).toEqual([
        [24, 12],
        [24, 12],
      ])
    }
  })

  it('draws each turn’s lengths from the spec’s distributions', () => {
    const data =
      'turns=3,prompt_tokens=64,prompt_tokens_min=40,prompt_tokens_max=80,output_tokens=30,output_tokens_stdev=5'
    const prompts: number[] = []
    const outputs: number[] = []
    for (const c of conversations(data, 400)) {
      for (const t of c.turns) {
        prompts.push(t.userIds.length)
        outputs.push(t.outputTokens)
      }
    }
    expect(Math.min(...prompts)).toBe(40)
    expect(Math.max(...prompts)).toBe(80)
    expect(new Set(prompts).size).toBe(41)
    expect(Math.min(...outputs)).toBeGreaterThanOrEqual(5)
    expect(Math.max(...outputs)).toBeLessThanOrEqual(55)
    const mean = outputs.reduce((s, v) => s + v, 0) / outputs.length
    expect(Math.abs(mean - 30)).toBeLessThan(0.5)
    expect(new Set(outputs).size).toBeGreaterThan(15)
  })

  it('gives at least one token to a turn whose sampled length is 0', () => {
    for (const c of conversations('prompt_tokens=0,output_tokens=0', 5)) {
      expect(c.turns[0]?.userIds).toHaveLength(1)
      expect(c.turns[0]?.outputTokens).toBe(1)
    }
  })
})

describe('createWorkload: no sharing beyond the prefix', () => {
  it('gives every request of every conversation a different first block of user text', () => {
    const data = 'turns=3,prefix_count=2,prefix_tokens=64,prompt_tokens=32,output_tokens=4'
    const firstBlocks = new Set<string>()
    let turns = 0
    for (const c of conversations(data, 300)) {
      for (const t of c.turns) {
        firstBlocks.add(t.userIds.slice(0, 16).join(','))
        turns++
      }
    }
    expect(turns).toBe(900)
    expect(firstBlocks.size).toBe(turns)
  })

  it('starts user text differently from every prefix', () => {
    const data = 'prefix_count=4,prefix_tokens=64,prompt_tokens=32,output_tokens=4'
    const plans = conversations(data, 100)
    const prefixStarts = new Set(plans.map((c) => c.prefix?.ids.slice(0, 16).join(',')))
    for (const c of plans) {
      expect(prefixStarts.has(c.turns[0]?.userIds.slice(0, 16).join(','))).toBe(false)
    }
  })
})

describe('createWorkload: fan-out', () => {
  const data = 'fan_out=4,prefix_tokens=64,prompt_tokens=16,output_tokens=2'

  it('gives the siblings of a burst one prefix of their own, and each its own user text', () => {
    const plans = conversations(data, 12)
    const prefixOf = (c: PlannedConversation) => c.prefix?.ids.join(',')
    for (let burst = 0; burst < 3; burst++) {
      const siblings = plans.slice(burst * 4, burst * 4 + 4)
      expect(siblings.map((c) => c.prefix?.key)).toEqual(Array(4).fill(`f${burst}`))
      expect(new Set(siblings.map(prefixOf)).size).toBe(1)
      expect(siblings[0]?.prefix?.ids).toHaveLength(64)
      expect(new Set(siblings.map((c) => c.turns[0]?.userIds.join(','))).size).toBe(4)
    }
    // Fresh per burst: no two bursts share even a first block.
    expect(new Set(plans.map((c) => c.prefix?.ids.slice(0, 16).join(','))).size).toBe(3)
  })

  it('draws a burst’s prefix from the seed and the burst alone', () => {
    expect(workloadOf(data).conversation(9).prefix).toEqual(
      workloadOf(data).conversation(10).prefix,
    )
    expect(workloadOf(data, 43).conversation(9).prefix?.ids).not.toEqual(
      workloadOf(data).conversation(9).prefix?.ids,
    )
    expect(workloadOf(data).fanOut).toEqual({ size: 4, windowMs: 50, prefixTokens: 64 })
  })
})
