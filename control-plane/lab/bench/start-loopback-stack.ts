import type { GpuProfile } from '../../../shared/gpu/gpu-profile.ts'
import type { RunningScorer } from '../../scorer/start-scorer.ts'
import { startSimulatedPools } from '../embedded/start-simulated-pools.ts'
import type { SimModelAssets } from '../sim/sim-model-assets.ts'
import type { SimPod } from '../sim/sim-pod.ts'
import { benchPoolSpec } from './bench-pool-spec.ts'

export interface LoopbackStack {
  /** The scorer's base URL: the benchmark's target. */
  url: string
  pods: SimPod[]
  scorer: RunningScorer
  /** The pods' prefix-cache counters summed (tokens). */
  prefixCache(): { queries: number; hits: number }
  close(): Promise<void>
}

export interface LoopbackStackOptions {
  router: string
  pods: number
  profile: GpuProfile
  timeScale: number
  seed: number
  assets: SimModelAssets
  log?: (message: string) => void
}

/**
 * The whole local path on loopback, fresh for one benchmark: N simulated pods (empty
 * caches) publishing KV events over ZMQ, and the scorer in front of them running
 * `router`, unsigned (nothing but this process can reach it).
 */
export async function startLoopbackStack(options: LoopbackStackOptions): Promise<LoopbackStack> {
  const { pods, scorer, close } = await startSimulatedPools({
    pools: [{ name: 'bench', spec: benchPoolSpec(options.router, options.profile.name) }],
    podsPerPool: options.pods,
    sim: {
      profile: options.profile,
      timeScale: options.timeScale,
      seed: options.seed,
      eventEncoding: 'map',
      assets: options.assets,
    },
    scorer: { signingSecrets: [], allowUnsigned: true },
    log: options.log ?? (() => {}),
  })
  return {
    url: scorer.url,
    pods,
    scorer,
    prefixCache: () =>
      pods.reduce(
        (sum, pod) => {
          const stats = pod.runtime().engine.stats
          return {
            queries: sum.queries + stats.prefixCacheQueries,
            hits: sum.hits + stats.prefixCacheHits,
          }
        },
        { queries: 0, hits: 0 },
      ),
    close,
  }
}
