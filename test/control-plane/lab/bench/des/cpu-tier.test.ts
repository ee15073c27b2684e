import { describe, expect, it } from 'vitest'
import { type DesJob, runDesJob } from '../../../../../control-plane/lab/bench/des/des-job.ts'
import { cpuTierEvents } from '../../../../../control-plane/lab/bench/run-benchmark-matrix.ts'
import { loadSimModelAssets } from '../../../../../control-plane/lab/sim/sim-model-assets.ts'
import { l40s27bFp8 } from '../../../../../shared/gpu/gpu-profile.ts'
import { createKinferenceStrategy } from '../../../../../shared/routing/strategies/create-kinference-strategy.ts'
import { defineStrategy } from '../../../../../shared/routing/strategies/define-strategy.ts'
import { builtinStrategies } from '../../../../../shared/routing/strategies/strategy-registry.ts'

// Pods with a CPU tier (vLLM's OffloadingConnector) in the discrete-event benchmark: its
// events must reach tier holdings and the router, as in the scorer, so a strategy sees the
// conversations' histories the GPUs evicted and the CPU tiers kept.

/** kinference, recording the most CPU blocks any candidate showed. */
function probe() {
  const seen = { cpuBlocks: 0, decisions: 0 }
  const definition = defineStrategy({
    name: 'tier-probe',
    description: 'kinference, watched.',
    create: () => {
      const inner = createKinferenceStrategy({ stepBudget: 8_192, copyHeadroom: 0.85 })
      return {
        ...inner,
        name: 'tier-probe',
        choose(request, candidates, context) {
          seen.decisions++
          for (const pod of candidates)
            seen.cpuBlocks = Math.max(seen.cpuBlocks, pod.tierBlocks?.CPU ?? 0)
          return inner.choose(request, candidates, context)
        },
      }
    },
  })
  return { seen, strategies: [...builtinStrategies, definition] }
}

const job = (kvEvents?: DesJob['kvEvents']): DesJob => ({
  workloadName: 'multi-turn',
  data: 'turns=5,prefix_count=8,prefix_tokens=1024,first_prompt_tokens=2048,prompt_tokens=256,output_tokens=256',
  profile: 'concurrent',
  rate: 80,
  router: 'tier-probe',
  maxRequests: 400,
  pods: 3,
  gpuProfile: 'l40s-27b-fp8',
  seed: 1,
  ...(kvEvents ? { kvEvents } : {}),
})

describe('a CPU tier in the discrete-event benchmark', () => {
  it('reaches the router: candidates show CPU blocks past their GPU hit, and none without it', async () => {
    const assets = loadSimModelAssets()
    const tiered = probe()
    const run = await runDesJob(
      job(cpuTierEvents(4, l40s27bFp8)),
      assets,
      undefined,
      tiered.strategies,
    )
    expect(run.records).toHaveLength(400)
    expect(tiered.seen.decisions).toBe(400)
    expect(tiered.seen.cpuBlocks).toBeGreaterThan(16)
    const plain = probe()
    await runDesJob(job(), assets, undefined, plain.strategies)
    expect(plain.seen.decisions).toBe(400)
    expect(plain.seen.cpuBlocks).toBe(0)
  }, 120_000)
})
