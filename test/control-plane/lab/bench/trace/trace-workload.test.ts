import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  type ChatFrame,
  createChatFrame,
} from '../../../../../control-plane/lab/bench/chat-prompt-ids.ts'
import { runDesJob } from '../../../../../control-plane/lab/bench/des/des-job.ts'
import type { MooncakeRequest } from '../../../../../control-plane/lab/bench/trace/parse-mooncake-trace.ts'
import { createTraceWorkload } from '../../../../../control-plane/lab/bench/trace/trace-workload.ts'
import type { Workload } from '../../../../../control-plane/lab/bench/workload.ts'
import { loadSimModelAssets } from '../../../../../control-plane/lab/sim/sim-model-assets.ts'

let assets: ReturnType<typeof loadSimModelAssets>
let frame: ChatFrame

beforeAll(() => {
  assets = loadSimModelAssets()
  frame = createChatFrame(assets.tokenizer)
})

const request = (
  timestamp: number,
  input: number,
  hashIds: number[],
  output = 4,
): MooncakeRequest => ({
  timestamp,
  input_length: input,
  output_length: output,
  hash_ids: hashIds,
})

/** Shares: 1 has 0's first two blocks, 4 all three of 0's (0's last one cut), 2 runs past its one hash id. */
const trace: MooncakeRequest[] = [
  request(100, 1100, [0, 1, 2]),
  request(600, 1300, [0, 1, 7]),
  request(1100, 2000, [3]),
  request(1200, 40_000, [4, 5]),
  request(1700, 1500, [0, 1, 2]),
]

const workloadOf = (overrides: Partial<Parameters<typeof createTraceWorkload>[1]> = {}) =>
  createTraceWorkload(trace, {
    seed: 42,
    vocabulary: assets.vocabulary,
    frame,
    maxModelLen: 32_768,
    offset: 0,
    maxRequests: 100,
    ...overrides,
  })

const idsOf = (workload: Workload, index: number) =>
  workload.conversation(index).turns[0]?.userIds ?? []

describe('createTraceWorkload: tokens', () => {
  it('gives each request input_length ids as one user message, no system prefix', () => {
    const workload = workloadOf()
    expect([0, 1, 2, 3].map((i) => idsOf(workload, i).length)).toEqual([1100, 1300, 2000, 1500])
    const plan = workload.conversation(1)
    expect(plan.prefix).toBeNull()
    expect(plan.turns).toHaveLength(1)
    expect(plan.turns[0]?.outputTokens).toBe(4)
  })

  it('gives equal hash ids equal 512-token blocks, the last one cut to a prefix of it', () => {
    const workload = workloadOf()
    const [a, b, , d] = [0, 1, 2, 3].map((i) => idsOf(workload, i))
    expect(b?.slice(0, 1024)).toEqual(a?.slice(0, 1024))
    expect(b?.slice(1024, 1100)).not.toEqual(a?.slice(1024, 1100))
    // Request 0 ends 76 tokens into block 2; request 4 (index 3) holds the whole block.
    expect(d?.slice(0, 1100)).toEqual(a)
  })

  it('makes the tokens past the hash ids the request’s own', () => {
    const workload = workloadOf()
    const tail = idsOf(workload, 2).slice(512)
    const seen = new Set(
      [0, 1, 3].flatMap((i) => {
        const ids = idsOf(workload, i)
        return Array.from({ length: ids.length - 15 }, (_, k) => ids.slice(k, k + 16).join(','))
      }),
    )
    for (let k = 0; k + 16 <= tail.length; k += 16)
      expect(seen.has(tail.slice(k, k + 16).join(','))).toBe(false)
    // Another request with the same hash id and a longer input: the same block, then its own.
    const other = createTraceWorkload([trace[2] as MooncakeRequest, request(1500, 2000, [3])], {
      seed: 42,
      vocabulary: assets.vocabulary,
      frame,
      maxModelLen: 32_768,
      offset: 0,
      maxRequests: 2,
    })
    expect(idsOf(other, 1).slice(0, 512)).toEqual(idsOf(other, 0).slice(0, 512))
    expect(idsOf(other, 1).slice(512, 528)).not.toEqual(idsOf(other, 0).slice(512, 528))
  })

  it('is a function of the seed: the same ids for the same seed, others for another', () => {
    expect(idsOf(workloadOf(), 1)).toEqual(idsOf(workloadOf(), 1))
    expect(idsOf(workloadOf({ seed: 43 }), 1).slice(0, 16)).not.toEqual(
      idsOf(workloadOf(), 1).slice(0, 16),
    )
  })

  it('survives the trip through text that a live run takes', () => {
    const ids = idsOf(workloadOf(), 2)
    expect(assets.tokenizer.encode(assets.tokenizer.decode(ids))).toEqual(ids)
  })
})

describe('createTraceWorkload: the slice', () => {
  it('skips and counts requests that do not fit the context with the template and output', () => {
    const workload = workloadOf()
    expect(workload.size).toBe(4)
    expect(workload.skipped).toBe(1)
    const template = frame.open.user.length + frame.close.length + frame.generation.length
    // vLLM refuses a prompt that reaches max_model_len, or whose output would pass it.
    const edge = (input: number, output: number) =>
      createTraceWorkload([request(0, input, [0], output)], {
        seed: 1,
        vocabulary: assets.vocabulary,
        frame,
        maxModelLen: 1000,
        offset: 0,
        maxRequests: 1,
      }).skipped
    expect(edge(1000 - template - 1, 1)).toBe(0)
    expect(edge(1000 - template - 1, 2)).toBe(1)
    expect(edge(1000 - template, 1)).toBe(1)
  })

  it('takes maxRequests from offset, timestamps rebased to the slice’s first', () => {
    const workload = workloadOf({ offset: 1, maxRequests: 3 })
    expect(workload.size).toBe(2)
    expect(workload.skipped).toBe(1)
    expect(workload.timestampsMs).toEqual([0, 500])
    expect(idsOf(workload, 0)).toEqual(idsOf(workloadOf(), 1))
    expect(() => workloadOf({ offset: 5 })).toThrow("trace offset 5 is past the trace's 5 requests")
  })

  it('rebases to the slice’s first request even when that one is skipped', () => {
    const workload = workloadOf({ offset: 3 })
    expect(workload.skipped).toBe(1)
    expect(workload.timestampsMs).toEqual([500])
  })
})

describe('a trace slice in the discrete-event benchmark', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kinf-trace-des-'))
  const file = join(dir, 'shared.jsonl')
  // Six requests a second apart; the fourth repeats the first's 8 leading blocks.
  const lines = [
    request(0, 4096, [0, 1, 2, 3, 4, 5, 6, 7], 8),
    request(1000, 3000, [10, 11, 12, 13, 14, 15], 8),
    request(2000, 2000, [20, 21, 22, 23], 8),
    request(3000, 4500, [0, 1, 2, 3, 4, 5, 6, 7, 30], 8),
    request(4000, 1000, [40, 41], 8),
    request(5000, 40_000, [50], 8),
  ]
  writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`)
  const job = (router: string, seed = 5) =>
    runDesJob(
      {
        workloadName: 'trace',
        data: `trace:${file}`,
        profile: 'trace',
        rate: 1,
        router,
        maxRequests: 6,
        pods: 3,
        gpuProfile: 'l40s-27b-fp8',
        seed,
      },
      assets,
    )

  it('is deterministic for a seed: the same records twice', async () => {
    const a = await job('kinference')
    const b = await job('kinference')
    expect(b.records).toEqual(a.records)
    expect(a.records).toHaveLength(5)
    expect(a.skippedRequests).toBe(1)
    expect(a.config.profile).toBe('trace@1')
    expect(a.config.rate).toBe(1)
    expect(a.records.map((r) => r.startMs)).toEqual([0, 1000, 2000, 3000, 4000])
  })

  it('serves the repeat on the first one’s pod with its blocks cached, under a cache-aware router', async () => {
    const run = await job('kinference')
    const first = run.records.find((r) => r.conversation === 0)
    const repeat = run.records.find((r) => r.conversation === 3)
    expect(repeat?.pod).toBe(first?.pod)
    // The 8 shared hash blocks (4,096 tokens) plus the template's header, in whole 16-token blocks.
    const shared = frame.open.user.length + 4096
    expect(repeat?.cachedTokens).toBe(Math.floor(shared / 16) * 16)
    expect(first?.cachedTokens).toBe(0)
    for (const r of run.records.filter((r) => r.conversation !== 3)) expect(r.cachedTokens).toBe(0)
  })

  it('replays faster at a higher speed: timestamps divided by it', async () => {
    const run = await runDesJob(
      {
        workloadName: 'trace',
        data: `trace:${file}`,
        profile: 'trace',
        rate: 4,
        router: 'round-robin',
        maxRequests: 6,
        pods: 3,
        gpuProfile: 'l40s-27b-fp8',
        seed: 5,
      },
      assets,
    )
    expect(run.records.map((r) => r.startMs)).toEqual([0, 250, 500, 750, 1000])
    expect(run.config.profile).toBe('trace@4')
  })
})
