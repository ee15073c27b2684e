import { type BenchPreset, benchPresets } from '../../bench-presets.ts'
import { spreadOf } from '../rate-points.ts'
import { runAtLoad, traceSpeed } from '../targets/scenario-runs.ts'
import {
  bestPeer,
  byRouter,
  compareWithBest,
  samplesOf,
  scenarioTable,
} from '../targets/target-checks.ts'
import { type TargetCheck, verdictOf } from '../targets/target-verdict.ts'
import type { TargetsContext } from '../targets/targets-context.ts'

const preset = (name: string): BenchPreset => benchPresets[name] as BenchPreset
const ours = 'kinference'
/** The CPU tier of issue 26's targets, as a multiple of the GPU's KV blocks. */
const tierMultiple = 4
/** Routers that weigh CPU-tier hits (llm-d's 0.8, Dynamo's host 0.75) and kinference. */
const tierAware = (router: string) =>
  router === ours || router.startsWith('llmd') || router.startsWith('dynamo')

export interface TierScenarios {
  sections: string[]
  targets: TargetCheck[]
}

/**
 * vLLM's CPU tier: multi-turn at 80 streams on GPUs alone and with a tier 4x their KV, and
 * the Mooncake trace with the tier against its tiered capacity ceiling.
 */
export async function cpuTierScenarios(ctx: TargetsContext): Promise<TierScenarios> {
  const mooncake = preset('mooncake')
  const [gpuOnly, tiered, speed] = await Promise.all([
    runAtLoad(ctx, 'multi-turn at 80 streams, GPU only', {
      preset: preset('multi-turn'),
      replicas: 1,
      rate: 80,
    }),
    runAtLoad(ctx, `multi-turn at 80 streams, CPU tier ${tierMultiple}x`, {
      preset: preset('multi-turn-cpu'),
      replicas: 1,
      rate: 80,
    }),
    traceSpeed(ctx, mooncake),
  ])
  const trace = await runAtLoad(
    ctx,
    `Mooncake trace at speed ${speed.speed}, CPU tier ${tierMultiple}x`,
    { preset: mooncake, replicas: 1, rate: speed.speed, cpuTier: tierMultiple },
    [ours],
  )
  const ceilings = await Promise.all(
    ctx.seeds.map((seed) => ctx.tieredCeiling(mooncake, seed, tierMultiple)),
  )
  const ceiling = spreadOf(ceilings).mean
  const hit = spreadOf(trace.runs.map((r) => r.hitRate)).mean
  const gpuBest = bestOverall(samplesOf(gpuOnly.runs, (r) => r.ttftP90S))
  const mine = spreadOf(tiered.runs.filter((r) => r.router === ours).map((r) => r.ttftP90S)).mean
  return {
    sections: [
      ...scenarioTable(gpuOnly),
      ...scenarioTable(tiered),
      ...scenarioTable(trace),
      `Tiered capacity ceiling of the trace (perfect foresight over GPU and CPU blocks): ${(ceiling * 100).toFixed(1)}%.`,
      '',
    ],
    targets: [
      {
        name: `multi-turn at 80 streams, CPU tier ${tierMultiple}x: p90 TTFT ≤ 0.5x the best GPU-only p90`,
        verdict: verdictOf(mine <= 0.5 * gpuBest.value),
        detail: `${mine.toFixed(3)} s vs ${gpuBest.value.toFixed(3)} s (${gpuBest.router}, GPU only; ${(mine / gpuBest.value).toFixed(2)}x)`,
      },
      compareWithBest(
        `multi-turn at 80 streams, CPU tier ${tierMultiple}x: p90 TTFT ≤ 0.85x the best tier-aware peer's`,
        samplesOf(
          tiered.runs.filter((r) => tierAware(r.router)),
          (r) => r.ttftP90S,
        ),
        { factor: 0.85, unit: ' s' },
      ),
      {
        name: `mooncake, CPU tier ${tierMultiple}x: hit rate ≥ 0.9 of the tiered capacity ceiling`,
        verdict: verdictOf(hit >= 0.9 * ceiling),
        detail: `${(hit * 100).toFixed(1)}% vs ${(ceiling * 100).toFixed(1)}% (${((hit / ceiling) * 100).toFixed(0)}%)`,
      },
    ],
  }
}

/** The lowest mean over the routers, kinference included: "today's best". */
function bestOverall(samples: ReturnType<typeof samplesOf>): { router: string; value: number } {
  const spreads = byRouter(samples)
  const peer = bestPeer(spreads)
  const mine = spreads.get(ours)?.mean ?? Number.POSITIVE_INFINITY
  if (!peer || mine < peer.spread.mean) return { router: ours, value: mine }
  return { router: peer.router, value: peer.spread.mean }
}
