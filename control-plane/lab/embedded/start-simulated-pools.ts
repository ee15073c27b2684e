import type { Tracer } from '@opentelemetry/api'
import { z } from 'zod'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { functionOption, parseOptions } from '../../../shared/config/parse-options.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { GpuProfile } from '../../../shared/gpu/gpu-profile.ts'
import type { Plugins } from '../../../shared/plugins.ts'
import { KvEventEncoding } from '../../kv-events/encode-event-batch.ts'
import type { EppConfigInput } from '../../scorer/epp/epp-config.ts'
import { dataParallelEndpoints } from '../../scorer/pools/data-parallel-endpoints.ts'
import {
  ScorerConfig,
  type ScorerPodInput,
  type ScorerPoolInput,
  scorerConfigSchema,
} from '../../scorer/scorer-config.ts'
import { type RunningScorer, startScorer } from '../../scorer/start-scorer.ts'
import { poolIdOf } from '../../scorer/state/scorer-state.ts'
import { scorerPodOf, startSimFleet } from '../sim/sim-fleet.ts'
import { loadSimModelAssets, type SimModelAssets } from '../sim/sim-model-assets.ts'
import type { SimPod } from '../sim/sim-pod.ts'
import type { SimFaultsPatch } from '../sim/sim-pod-config.ts'
import { closeAll } from './close-all.ts'
import { scorerPoolsOf } from './scorer-backends-of.ts'

const object = <T>() => z.custom<T>((value) => typeof value === 'object' && value !== null)

/** A port to listen on; 0, the default, takes a free one. */
export const ListenPort = z.int().min(0).max(65_535).default(0)

/** How the simulated pods of every pool run. */
export const SimulatedPodOptions = z.strictObject({
  profile: object<GpuProfile>(),
  timeScale: z.number(),
  seed: z
    .number()
    .describe('Pod j of pool i is seeded seed + 100·i + j, so pools never share a random stream'),
  eventEncoding: KvEventEncoding.default('map'),
  port: ListenPort.describe("First pod's HTTP port; pool i's pods follow pool i-1's"),
  zmqPort: ListenPort.describe(
    "First pod's ZMQ port, two per engine of a pod, pools one after another",
  ),
  dataParallelSize: z
    .int()
    .min(1)
    .max(64)
    .default(1)
    .describe('Engines per pod (vLLM --data-parallel-size); the scorer routes to each'),
  loraAdapters: z
    .array(z.string().min(1))
    .default([])
    .describe("The pods' LoRA adapters (vLLM --lora-modules names)"),
  faults: object<SimFaultsPatch>().optional(),
  assets: object<SimModelAssets>()
    .optional()
    .describe(
      'Shared by the pods of every pool whose tokenizer it was loaded from; loaded when absent',
    ),
  enablePromptTokensDetails: z
    .boolean()
    .default(true)
    .describe(
      "vLLM's --enable-prompt-tokens-details, as Kinference deploys vLLM: the scorer's index-trust check reads the cached tokens",
    ),
  anyModelName: z
    .string()
    .min(1)
    .default('simulated-model')
    .describe(
      'The model the pods of a pool serving any model ("*") serve, as vLLM pods would serve a real one',
    ),
  namePrefix: functionOption<(pool: string) => string>()
    .optional()
    .describe(
      "Pool name → its pods' name prefix (sim-pod when absent); names must differ across pools",
    ),
})
export type SimulatedPodOptions = z.infer<typeof SimulatedPodOptions>
export type SimulatedPodOptionsInput = z.input<typeof SimulatedPodOptions>

/** ScorerConfig, with a free port when none is asked for. */
const SimulatedScorerConfig = ScorerConfig.extend({ port: ListenPort })

/** How the scorer in front of the simulated pods runs (ScorerConfig's fields callers vary). */
export interface SimulatedScorerOptions {
  /** A free one when absent. */
  port?: number
  /** Its /metrics and /health: a free port when absent, off when null. */
  metricsPort?: number | null
  signingSecrets: string[]
  allowUnsigned?: boolean
  adminToken?: string | null
  redisUrl?: string | null
  redisPrefix?: string
  eventsBind?: string | null
  maxBodyBytes?: number
  /** GatewayBackend → pool, besides the snapshot's own when pools come from one. */
  backends?: ScorerConfig['backends']
  /** Pods the scorer routes to besides the simulated ones (pods that are down, real servers). */
  extraPods?: ScorerPodInput[]
  /**
   * The snapshot the fleets' pools come from: the scorer starts from it (pool ids, backends,
   * its hash for applySnapshot), the simulated pods given by hand.
   */
  snapshot?: ConfigSnapshot | null
  /** The strategies and conditions the scorer runs; the built-in ones when absent. */
  plugins?: Plugins
  /** The scorer as a gateway's Endpoint Picker (kinfctl scorer --epp-port); off when absent. */
  epp?: EppConfigInput | null
  /** Where the scorer's request spans go (docs/tracing.md); none when absent. */
  tracer?: Tracer
}

export interface SimulatedPoolsOptions {
  /** The pools to simulate, or a compiled snapshot: all its pools, and its backends. */
  pools: readonly ScorerPoolInput[] | ConfigSnapshot
  podsPerPool: number
  sim: SimulatedPodOptionsInput
  scorer: SimulatedScorerOptions
  log: (message: string) => void
}

/** One pool's simulated pods. */
export interface SimulatedFleet {
  pool: ScorerPoolInput
  pods: SimPod[]
}

export interface SimulatedPools {
  /** Every pool's pods, pool by pool. */
  pods: SimPod[]
  fleets: SimulatedFleet[]
  scorer: RunningScorer
  /** The scorer, then the pods, last started first. */
  close(): Promise<void>
}

/**
 * Simulated vLLM pods, one fleet per pool serving the pool's first model (on vLLM's pooling
 * runner when its task is Embed), and the scorer in front of them. It lives here rather than in control-plane/scorer/ because the
 * scorer must never load the simulator.
 */
export async function startSimulatedPools(options: SimulatedPoolsOptions): Promise<SimulatedPools> {
  const snapshot = 'kind' in options.pools ? options.pools : null
  const pools = 'kind' in options.pools ? scorerPoolsOf(options.pools) : [...options.pools]
  if (pools.length === 0) throw new KinfError('invalid_config', 'the config has no pool')
  const sim = parseSimulatedPodOptions(options.sim)
  // Each pool's pods serve its first model's tokenizer, through the simulator's own loader.
  const assetsFor = (tokenizer: string) =>
    sim.assets?.source === tokenizer ? sim.assets : loadSimModelAssets(tokenizer)
  const { port, zmqPort } = sim
  const started: { close(): Promise<void> }[] = []
  try {
    const fleets: SimulatedFleet[] = []
    for (const [i, pool] of pools.entries()) {
      const first = pool.spec.models[0]?.name
      const model = first === '*' ? sim.anyModelName : first
      if (!model) throw new KinfError('invalid_config', `pool ${pool.name} serves no model`)
      const tokenizer = pool.spec.models[0]?.tokenizer ?? 'qwen3'
      const firstPod = i * options.podsPerPool
      const pods = await startSimFleet({
        pods: options.podsPerPool,
        profile: sim.profile,
        modelName: model,
        port: port === 0 ? 0 : port + firstPod,
        zmqPort: zmqPort === 0 ? 0 : zmqPort + 2 * sim.dataParallelSize * firstPod,
        dataParallelSize: sim.dataParallelSize,
        loraAdapters: sim.loraAdapters,
        timeScale: sim.timeScale,
        seed: sim.seed + 100 * i,
        eventEncoding: sim.eventEncoding,
        tokenizer,
        assets: assetsFor(tokenizer),
        enablePromptTokensDetails: sim.enablePromptTokensDetails,
        // An embedding model runs on vLLM's pooling runner: /v1/embeddings, no completions;
        // with prefix caching where the pool says its pods publish KV events (a LAST-pooling
        // model, as docs/embeddings.md says).
        ...(pool.spec.models[0]?.task === 'Embed'
          ? { runner: 'pooling', enablePrefixCaching: pool.spec.kvEvents !== undefined }
          : { runner: 'generate' }),
        ...(sim.faults ? { faults: sim.faults } : {}),
        ...(sim.namePrefix ? { namePrefix: sim.namePrefix(pool.name) } : {}),
      })
      started.push(...pods)
      fleets.push({ pool, pods })
    }
    const scorer = await startScorerOver(fleets, { ...options.scorer, snapshot }, options.log)
    started.push(scorer)
    return {
      pods: fleets.flatMap((fleet) => fleet.pods),
      fleets,
      scorer,
      close: () => closeAll(started),
    }
  } catch (error) {
    await closeAll(started)
    throw error
  }
}

function parseSimulatedPodOptions(input: SimulatedPodOptionsInput): SimulatedPodOptions {
  return parseOptions(SimulatedPodOptions, input, 'simulated pods')
}

/**
 * A scorer over fleets already running, e.g. a second one with other pool specs over the
 * same pods; the caller closes it before the pods.
 */
export function startScorerOver(
  fleets: readonly SimulatedFleet[],
  options: SimulatedScorerOptions,
  log: (message: string) => void,
): Promise<RunningScorer> {
  const config = options.plugins
    ? scorerConfigSchema(options.plugins).extend({ port: ListenPort })
    : SimulatedScorerConfig
  return startScorer(
    // Absent fields take ScorerConfig's defaults.
    config.parse({
      port: options.port,
      metricsPort: options.metricsPort,
      signingSecrets: options.signingSecrets,
      allowUnsigned: options.allowUnsigned,
      adminToken: options.adminToken,
      redisUrl: options.redisUrl,
      redisPrefix: options.redisPrefix,
      eventsBind: options.eventsBind,
      maxBodyBytes: options.maxBodyBytes,
      backends: options.backends,
      epp: options.epp ?? null,
      snapshot: options.snapshot ?? null,
      pools: options.snapshot ? [] : fleets.map((fleet) => fleet.pool),
      pods: [
        ...fleets.flatMap(({ pool, pods }) =>
          pods.flatMap((pod) =>
            dataParallelEndpoints(
              {
                ...scorerPodOf(
                  pod,
                  poolIdOf({ name: pool.name, namespace: pool.namespace ?? null }),
                ),
                metrics: null,
                dataParallelRank: null,
              },
              pod.config.dataParallelSize,
            ),
          ),
        ),
        ...(options.extraPods ?? []),
      ],
    }),
    log,
    options.plugins,
    { tracer: options.tracer },
  )
}
