import { describe, expect, it } from 'vitest'
import type { DesJob } from '../../../../../control-plane/lab/bench/des/des-job.ts'
import { runDesJobs } from '../../../../../control-plane/lab/bench/des/run-des-jobs.ts'
import type { BenchmarkRun } from '../../../../../control-plane/lab/bench/request-record.ts'

// Issue 23: a hybrid model (vLLM 0.21+: a full-attention KV-cache group beside
// sliding-window ones, its events tagged with group_idx and the group's block size) must
// route as well as a pure-attention model on the same workload. The simulated pods emit
// the hybrid events; the router indexes the full-attention group alone. Were the window
// group's blocks indexed too, or its removals applied to the attention group's entries,
// the router's picks (and so the pods' hits) would drift from the pure run's.

const job = (kvEvents: DesJob['kvEvents']): DesJob => ({
  workloadName: 'shared-prefixes',
  data: 'prefix_count=6,prefix_tokens=1536,prompt_tokens=96,output_tokens=12',
  profile: 'poisson',
  rate: 6,
  router: 'kinference',
  maxRequests: 160,
  pods: 4,
  gpuProfile: 'l40s-27b-fp8',
  seed: 1,
  ...(kvEvents ? { kvEvents } : {}),
})

const hitRate = (run: BenchmarkRun) =>
  run.prefixCache === null ? Number.NaN : run.prefixCache.hits / run.prefixCache.queries
const picks = (run: BenchmarkRun) => run.records.map((r) => r.pod)

describe('a hybrid model in the discrete-event benchmark', () => {
  it('gets the pure-attention run’s picks and hit rate, and the pods hit what was predicted', async () => {
    const [pure, hybrid, salted, coarse, coarseWindow] = (await runDesJobs(
      [
        job(undefined),
        job({ hybrid: { slidingWindow: 512, slidingWindowGroups: 2 } }),
        job({ hybrid: { slidingWindow: 512, slidingWindowFirst: true }, groupFields: true }),
        // The attention group's blocks twice the pool's block size, as hybrid models
        // announce a block size of their own (528 for Qwen3.5-9B, vLLM #49537).
        job({ hybrid: { slidingWindow: 512, fullAttentionBlockSize: 32 } }),
        // The window group's blocks twice the attention group's: its events name every
        // other attention hash with a 32-token block, and would re-key those hashes.
        job({ hybrid: { slidingWindow: 512, slidingWindowBlockSize: 32 } }),
      ],
      { threads: 1 },
    )) as [BenchmarkRun, BenchmarkRun, BenchmarkRun, BenchmarkRun, BenchmarkRun]
    expect(hitRate(pure)).toBeGreaterThan(0.5)
    expect(hitRate(hybrid)).toBe(hitRate(pure))
    expect(picks(hybrid)).toEqual(picks(pure))
    // The window groups numbered first: group 0 is no longer the full-attention group.
    expect(hitRate(salted)).toBe(hitRate(pure))
    const cached = (run: BenchmarkRun) => run.records.reduce((sum, r) => sum + r.cachedTokens, 0)
    expect(cached(hybrid)).toBe(cached(pure))
    // Keyed with the pool's 16 the router would match none of the 32-token blocks: its
    // picks would fall to load alone and the hit rate with them. It keys with the 32 the
    // events carry, and the prefixes (multiples of 32 tokens) match as in the pure run.
    expect(hitRate(coarse)).toBe(hitRate(pure))
    expect(picks(coarse)).toEqual(picks(pure))
    // Indexing the window group too would break the attention chains at every other block.
    expect(hitRate(coarseWindow)).toBe(hitRate(pure))
    expect(picks(coarseWindow)).toEqual(picks(pure))
  }, 120_000)
})
