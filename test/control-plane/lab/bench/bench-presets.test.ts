import { beforeAll, describe, expect, it } from 'vitest'
import {
  benchPresets,
  defaultBenchPods,
} from '../../../../control-plane/lab/bench/bench-presets.ts'
import { createChatFrame } from '../../../../control-plane/lab/bench/chat-prompt-ids.ts'
import { parseDataSpec } from '../../../../control-plane/lab/bench/data-spec.ts'
import { desJobsOf } from '../../../../control-plane/lab/bench/run-benchmark-matrix.ts'
import { createWorkload, type Workload } from '../../../../control-plane/lab/bench/workload.ts'
import { parseBenchArgs } from '../../../../control-plane/lab/commands/bench-args.ts'
import { planBench } from '../../../../control-plane/lab/commands/bench-plan.ts'
import { benchUsage } from '../../../../control-plane/lab/commands/bench-usage.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import { l40s27bFp8, numGpuBlocks } from '../../../../shared/gpu/gpu-profile.ts'

let assets: ReturnType<typeof loadSimModelAssets>

beforeAll(() => {
  assets = loadSimModelAssets()
})

/** The audit's shapes (docs/benchmarks.md, "Audit presets"). */
const auditPresets = [
  'prefix-heavy-3pods',
  'prefix-heavy-4pods',
  'prefix-heavy-6pods',
  'long-outputs',
  'prefix-buckets',
] as const

const workloadOf = (name: string, seed: number): Workload =>
  createWorkload(parseDataSpec(benchPresets[name]?.data ?? ''), seed, assets.vocabulary)

/** What a conversation is made of, small enough to compare: prefix, lengths and first ids. */
const shapes = (workload: Workload, count: number) =>
  Array.from({ length: count }, (_, i) => {
    const { prefix, turns } = workload.conversation(i)
    return {
      prefix: prefix?.key ?? null,
      prefixHead: prefix?.ids.slice(0, 4) ?? [],
      turns: turns.map((t) => [t.userIds.length, t.outputTokens, ...t.userIds.slice(0, 4)]),
    }
  })

describe('the audit presets', () => {
  it('are registered under their names, off the published targets, and listed by --help', () => {
    for (const name of auditPresets) {
      const preset = benchPresets[name]
      expect(preset?.name, name).toBe(name)
      expect(preset?.published, name).toBeNull()
      expect(preset?.rates, name).toBeNull()
      expect(benchUsage).toContain(name)
    }
  })

  it.each(auditPresets)(
    '%s builds the same workload for a seed and another for another',
    (name) => {
      const first = shapes(workloadOf(name, 42), 50)
      expect(shapes(workloadOf(name, 42), 50)).toEqual(first)
      expect(shapes(workloadOf(name, 7), 50)).not.toEqual(first)
    },
  )

  it('prefix-heavy is one data set on 3, 4 and 6 pods: 48 prefixes of 3000 tokens', () => {
    const [three, four, six] = [3, 4, 6].map((pods) => benchPresets[`prefix-heavy-${pods}pods`])
    expect([three?.pods, four?.pods, six?.pods]).toEqual([3, 4, 6])
    expect(new Set([three?.data, four?.data, six?.data]).size).toBe(1)
    const workload = workloadOf('prefix-heavy-3pods', 42)
    const keys = new Set<string>()
    for (let i = 0; i < 2_000; i++) {
      const { prefix, turns } = workload.conversation(i)
      expect(prefix?.ids).toHaveLength(3000)
      expect(turns.map((t) => [t.userIds.length, t.outputTokens])).toEqual([[256, 256]])
      keys.add(prefix?.key ?? '')
    }
    expect(keys.size).toBe(48)
  })

  it('long-outputs draws outputs of 2048 ± 1024 tokens within 128 to 8192', () => {
    const workload = workloadOf('long-outputs', 42)
    const outputs = Array.from(
      { length: 4_000 },
      (_, i) => workload.conversation(i).turns[0]?.outputTokens ?? 0,
    )
    const mean = outputs.reduce((a, b) => a + b, 0) / outputs.length
    const stdev = Math.sqrt(outputs.reduce((a, b) => a + (b - mean) ** 2, 0) / outputs.length)
    expect(Math.min(...outputs)).toBeGreaterThanOrEqual(128)
    expect(Math.max(...outputs)).toBeLessThanOrEqual(8192)
    expect(Math.abs(mean - 2048)).toBeLessThan(60)
    // Clipping at 128 trims the left tail a little: the spread stays near the stated σ.
    expect(stdev).toBeGreaterThan(900)
    expect(stdev).toBeLessThan(1100)
    expect(new Set(outputs).size).toBeGreaterThan(1_000)
    const long = outputs.filter((n) => n >= 4096).length / outputs.length
    const short = outputs.filter((n) => n <= 512).length / outputs.length
    expect(long).toBeGreaterThan(0.01)
    expect(short).toBeGreaterThan(0.03)
  })

  it('prefix-buckets draws its buckets 40/30/20/10, each with its own count and length', () => {
    const workload = workloadOf('prefix-buckets', 42)
    const stated = [
      { share: 0.4, count: 4, tokens: 8192 },
      { share: 0.3, count: 16, tokens: 2048 },
      { share: 0.2, count: 64, tokens: 1024 },
      { share: 0.1, count: 256, tokens: 512 },
    ]
    const draws = 10_000
    const hits = stated.map(() => 0)
    const keys = stated.map(() => new Set<string>())
    for (let i = 0; i < draws; i++) {
      const { prefix } = workload.conversation(i)
      const bucket = Number(/^b(\d+)p\d+$/.exec(prefix?.key ?? '')?.[1])
      expect(prefix?.ids).toHaveLength(stated[bucket]?.tokens ?? -1)
      hits[bucket] = (hits[bucket] ?? 0) + 1
      keys[bucket]?.add(prefix?.key ?? '')
    }
    stated.forEach((bucket, b) => {
      // 10,000 draws: the binomial σ of a share is at most 0.5 points; 1.5 points is 3σ.
      expect(Math.abs((hits[b] ?? 0) / draws - bucket.share), `bucket ${b}`).toBeLessThan(0.015)
      expect(keys[b]?.size, `bucket ${b}`).toBeLessThanOrEqual(bucket.count)
      expect(keys[b]?.size, `bucket ${b}`).toBeGreaterThan(bucket.count * 0.9)
    })
  })
})

describe('kinfctl bench: a preset brings its pool size', () => {
  const plan = (args: string[]) =>
    planBench(
      parseBenchArgs([...args, '--rate', '1', '--max-requests', '20', '--routers', 'round-robin']),
      assets,
      createChatFrame(assets.tokenizer),
    )

  it('runs each preset on its own pods, one group per pool size, and --pods overrides', async () => {
    const groups = await plan(['--preset', 'prefix-heavy-6pods,shared-prefix,prefix-heavy-4pods'])
    expect(groups.map((g) => [g.pods, g.workloads.map((w) => w.name)])).toEqual([
      [6, ['prefix-heavy-6pods']],
      [defaultBenchPods, ['shared-prefix']],
      [4, ['prefix-heavy-4pods']],
    ])
    // The bound is the pool's: six pods carry more of the same stream than four.
    const bound = (name: string) =>
      groups.flatMap((g) => [...g.bounds]).find(([n]) => n === name)?.[1].fluidRps
    expect(bound('prefix-heavy-6pods')).toBeGreaterThan(bound('prefix-heavy-4pods') ?? Infinity)
    const forced = await plan(['--preset', 'prefix-heavy-6pods,shared-prefix', '--pods', '2'])
    expect(forced.map((g) => [g.pods, g.workloads.length])).toEqual([[2, 2]])
  })
})

describe('kinfctl bench: a CPU tier on the pods', () => {
  const plan = (args: string[]) =>
    planBench(
      parseBenchArgs([...args, '--rate', '80', '--max-requests', '20', '--routers', 'kinference']),
      assets,
      createChatFrame(assets.tokenizer),
    )
  const tierOf = async (args: string[]) =>
    (await plan(args)).flatMap((g) => g.workloads.map((w) => [w.name, w.cpuTier] as const))

  it('multi-turn-cpu is multi-turn’s data with a tier 4x the GPU’s KV, which --cpu-tier overrides', async () => {
    expect(benchPresets['multi-turn-cpu']?.data).toBe(benchPresets['multi-turn']?.data)
    expect(await tierOf(['--preset', 'multi-turn-cpu,multi-turn'])).toEqual([
      ['multi-turn-cpu', 4],
      ['multi-turn', undefined],
    ])
    expect(await tierOf(['--preset', 'multi-turn-cpu,multi-turn', '--cpu-tier', '2x'])).toEqual([
      ['multi-turn-cpu', 2],
      ['multi-turn', 2],
    ])
    expect(await tierOf(['--preset', 'multi-turn-cpu', '--cpu-tier', '0'])).toEqual([
      ['multi-turn-cpu', undefined],
    ])
  })

  it('sizes the tier in the pods’ GPU blocks and refuses what is not a multiple', () => {
    const job = desJobsOf({
      mode: 'des',
      workloads: [
        {
          name: 'w',
          data: 'prompt_tokens=8',
          profile: 'poisson',
          rates: [1],
          maxRequests: 1,
          cpuTier: 4,
        },
      ],
      routers: ['kinference'],
      pods: 3,
      profile: l40s27bFp8,
      seed: 1,
      assets,
    })[0]
    expect(job?.kvEvents).toEqual({ cpuOffload: { capacityBlocks: 4 * numGpuBlocks(l40s27bFp8) } })
    expect(() => parseBenchArgs(['--preset', 'multi-turn', '--cpu-tier', 'lots'])).toThrow(
      '--cpu-tier must be a multiple',
    )
    expect(() =>
      parseBenchArgs(['--preset', 'multi-turn', '--cpu-tier', '4x', '--mode', 'live']),
    ).toThrow('--cpu-tier is a DES option')
    expect(parseBenchArgs(['--preset', 'multi-turn', '--cpu-tier', '4x']).cpuTier).toBe(4)
  })
})
