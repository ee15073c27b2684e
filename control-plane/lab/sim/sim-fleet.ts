import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { GpuProfile } from '../../../shared/gpu/gpu-profile.ts'
import type { SimKvEventsOptionsInput } from './engine/kv-events-options.ts'
import { loadSimModelAssets, type SimModelAssets } from './sim-model-assets.ts'
import { createSimPod, type SimPod } from './sim-pod.ts'
import type { SimFaultsPatch } from './sim-pod-config.ts'

export interface SimFleetOptions {
  pods: number
  profile: GpuProfile
  modelName: string
  host?: string
  /** Pod i serves HTTP on port + i (0: free ports). */
  port: number
  /**
   * With N data-parallel ranks per pod, pod i's rank r publishes on zmqPort + 2N·i + r and
   * answers replays on zmqPort + 2N·i + N + r; one rank: zmqPort + 2i and + 2i + 1 (0: free
   * ports, rank r still on rank 0's ports + r).
   */
  zmqPort: number
  /** Engines per pod (vLLM --data-parallel-size); 1 when absent. */
  dataParallelSize?: number
  /** The pods' LoRA adapters (vLLM --lora-modules names); none when absent. */
  loraAdapters?: readonly string[]
  timeScale: number
  seed: number
  eventEncoding: 'map' | 'array'
  faults?: SimFaultsPatch
  /** The KV-event variants of vLLM the pods emit (CPU offload, hybrid groups, …); vLLM's defaults when absent. */
  kvEvents?: SimKvEventsOptionsInput
  /**
   * The model's tokenizer (a built-in name or a Hugging Face model directory), qwen3 when
   * absent; `assets`, when given, must be loaded from the same source.
   */
  tokenizer?: string
  assets?: SimModelAssets
  /**
   * vLLM's --enable-prompt-tokens-details (usage.prompt_tokens_details.cached_tokens). On
   * unless told: Kinference deploys vLLM with it, and the scorer's index-trust check reads it.
   */
  enablePromptTokensDetails?: boolean
  /** Pod i is named `${namePrefix}-${i}` (default sim-pod); unique across the scorer's pools. */
  namePrefix?: string
  /** Pod i is named names[i] instead (one per pod), e.g. the name of its Pod object. */
  names?: readonly string[]
  /** vLLM's --runner: generate (the default) or pooling (/v1/embeddings). */
  runner?: 'generate' | 'pooling'
  /**
   * vLLM's --enable-prefix-caching: on a pooling pod, a LAST-pooling model that caches its
   * inputs' blocks and publishes KV events; vLLM's default for the runner when absent.
   */
  enablePrefixCaching?: boolean
}

/**
 * A simulated pod as the scorer's config lists it (ScorerPod): its HTTP and KV-event
 * endpoints, rank 0's for a pod with data-parallel ranks (the scorer's
 * dataParallelEndpoints gives each rank its own, on those ports + rank).
 */
export function scorerPodOf(pod: SimPod, pool: string) {
  return {
    name: pod.config.podName,
    pool,
    http: pod.url,
    events: pod.kvEventsEndpoint,
    replay: pod.replayEndpoint,
  }
}

/** Starts N simulated pods in this process, with the port layout `kinfctl sim` documents. */
export async function startSimFleet(options: SimFleetOptions): Promise<SimPod[]> {
  if (options.names !== undefined && options.names.length !== options.pods)
    throw new KinfError(
      'invalid_config',
      `sim: ${options.names.length} names for ${options.pods} pods; give one per pod`,
    )
  const assets = options.assets ?? loadSimModelAssets(options.tokenizer)
  if (options.tokenizer !== undefined && assets.source !== options.tokenizer)
    throw new KinfError(
      'invalid_config',
      `sim: the assets are ${assets.source}'s, the pods serve ${options.tokenizer}`,
    )
  const ranks = options.dataParallelSize ?? 1
  const zmqPortOf = (i: number, offset: number) =>
    options.zmqPort === 0 ? 0 : options.zmqPort + 2 * ranks * i + offset
  const pods: SimPod[] = []
  try {
    for (let i = 0; i < options.pods; i++) {
      pods.push(
        await createSimPod(
          {
            podName: options.names?.[i] ?? `${options.namePrefix ?? 'sim-pod'}-${i}`,
            modelName: options.modelName,
            profile: options.profile,
            host: options.host ?? '127.0.0.1',
            httpPort: options.port === 0 ? 0 : options.port + i,
            zmqPort: zmqPortOf(i, 0),
            replayPort: zmqPortOf(i, ranks),
            dataParallelSize: ranks,
            loraAdapters: [...(options.loraAdapters ?? [])],
            timeScale: options.timeScale,
            seed: options.seed + i,
            eventEncoding: options.eventEncoding,
            tokenizer: assets.source,
            enablePromptTokensDetails: options.enablePromptTokensDetails ?? true,
            faults: options.faults ?? {},
            kvEvents: options.kvEvents ?? {},
            runner: options.runner ?? 'generate',
            ...(options.enablePrefixCaching === undefined
              ? {}
              : { enablePrefixCaching: options.enablePrefixCaching }),
          },
          assets,
        ),
      )
    }
  } catch (error) {
    await Promise.all(pods.map((pod) => pod.close()))
    throw error
  }
  return pods
}
