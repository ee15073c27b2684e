import { numGpuBlocks } from '../../../shared/gpu/gpu-profile.ts'
import type { KvEventPublisher } from '../../kv-events/create-kv-event-publisher.ts'
import { DataParallelBalancer } from './data-parallel-balancer.ts'
import type { VllmEngine } from './engine/vllm-engine.ts'
import { createEngineRank, type EngineRank, type RankRequest } from './engine-rank.ts'
import {
  createDataParallelVllmMetrics,
  type DataParallelVllmMetrics,
} from './metrics/create-vllm-metrics.ts'
import { createRankPublishers, type RankSockets } from './rank-publishers.ts'
import type { RealTimeDriver, RequestListener } from './real-time-driver.ts'
import { prefixCachingEnabled, type SimFaults, type SimPodConfig } from './sim-pod-config.ts'

/**
 * One incarnation of a simulated pod: its engines (one per data-parallel rank, each with
 * its driver and KV-event publisher) and the server's metrics. A restart builds a new
 * one, as a restarted vLLM process starts with empty caches, new NONE_HASHes, event seq 0
 * on every rank and fresh counters.
 */
export interface PodRuntime {
  /** Rank r at index r; one for a pod without data parallelism. */
  readonly ranks: readonly EngineRank[]
  /** Rank 0's (the pod's own without data parallelism). */
  readonly engine: VllmEngine
  readonly driver: RealTimeDriver
  readonly publisher: KvEventPublisher
  readonly metrics: DataParallelVllmMetrics
  /** Wall-clock start of this incarnation, as prometheus_client's process collector shows it. */
  readonly startedAtSeconds: number
  /** The rank vLLM's load balancer gives a request that names none. */
  pickRank(): number
  /** Queues a request on a rank (0 unless told); returns its arrival in modelled ms. */
  submit(input: RankRequest, listener: RequestListener, rank?: number): number
  abort(id: string): void
  setPaused(paused: boolean): void
  /** Every rank's; true when every one was reset (vLLM refuses while blocks are in use). */
  resetPrefixCache(): boolean
  close(): Promise<void>
}

export async function createPodRuntime(
  config: SimPodConfig,
  faults: () => SimFaults,
  /** Rank r's randomness at index r (NONE_HASH, jitter, dropped batches). */
  randoms: readonly (() => number)[],
  sockets: RankSockets,
): Promise<PodRuntime> {
  const publishers = await createRankPublishers(config, sockets)
  const metrics = createDataParallelVllmMetrics({
    engines: config.dataParallelSize,
    modelName: config.modelName,
    maxModelLen: config.profile.model.maxModelLen,
    cacheConfig: {
      blockSize: config.profile.blockSize,
      numGpuBlocks: numGpuBlocks(config.profile),
      enablePrefixCaching: prefixCachingEnabled(config),
    },
    now: () => Date.now() / 1000,
  })
  const owners = new Map<string, EngineRank>()
  // vLLM numbers the --lora-modules adapters 1, 2, … as it loads them at start.
  const loraIds = new Map(config.loraAdapters.map((name, index) => [name, index + 1]))
  const ranks: EngineRank[] = []
  try {
    for (const [rank, publisher] of publishers.entries()) {
      ranks.push(
        createEngineRank({
          config,
          rank,
          faults,
          random: randomOf(randoms, rank),
          publisher,
          metrics: metrics.engines[rank] as DataParallelVllmMetrics['engines'][number],
          loraIds,
          onDone: (id) => owners.delete(id),
        }),
      )
    }
  } catch (error) {
    await Promise.all(ranks.map((rank) => rank.close()))
    await Promise.all(publishers.slice(ranks.length).map((publisher) => publisher.close()))
    throw error
  }
  const first = ranks[0] as EngineRank
  const balancer = new DataParallelBalancer()

  return {
    ranks,
    engine: first.engine,
    driver: first.driver,
    publisher: first.publisher,
    metrics,
    startedAtSeconds: Date.now() / 1000,
    pickRank: () => (ranks.length === 1 ? 0 : balancer.pick(ranks.map((rank) => rank.load()))),
    submit(input, listener, rank = 0) {
      const target = ranks[rank]
      if (!target) throw new Error(`no data-parallel rank ${rank} in ${ranks.length}`)
      const arrivalMs = target.submit(input, listener)
      owners.set(input.id, target)
      return arrivalMs
    },
    abort(id) {
      owners.get(id)?.abort(id)
    },
    setPaused(paused) {
      for (const rank of ranks) rank.driver.setPaused(paused)
    },
    resetPrefixCache() {
      return ranks.map((rank) => rank.resetPrefixCache()).every(Boolean)
    },
    async close() {
      await Promise.all(ranks.map((rank) => rank.close()))
    },
  }
}

function randomOf(randoms: readonly (() => number)[], rank: number): () => number {
  const random = randoms[rank]
  if (!random) throw new Error(`no randomness for data-parallel rank ${rank}`)
  return random
}
