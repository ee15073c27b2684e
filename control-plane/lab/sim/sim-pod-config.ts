import { z } from 'zod'
import { GpuProfile } from '../../../shared/gpu/gpu-profile.ts'
import { SimKvEventsOptions } from './engine/kv-events-options.ts'

/** Faults a pod can be told to inject, at start (flags) or at run time (POST /admin/faults). */
const faultFields = {
  /** Probability that a generation request is answered with a 500 instead. */
  errorRate: z.number().min(0).max(1),
  /** Streams stop sending after this many tokens and hang until the client leaves. */
  stallAfterTokens: z.int().min(0).nullable(),
  /** Probability that a KV-event batch is numbered and buffered but never sent (a gap). */
  dropEventRate: z.number().min(0).max(1),
  /** Delay before each KV-event batch is sent, in real milliseconds. */
  eventDelayMs: z.number().min(0).max(600_000),
  /** /health answers 503. */
  unhealthy: z.boolean(),
  /** The engine stops stepping: requests queue and streams freeze, until unpaused. */
  paused: z.boolean(),
}
export const SimFaults = z.strictObject(faultFields)
export type SimFaults = z.infer<typeof SimFaults>
/** A change to some faults; the others keep their values. */
export const SimFaultsPatch = SimFaults.partial()
export type SimFaultsPatch = z.infer<typeof SimFaultsPatch>

export const noFaults: SimFaults = {
  errorRate: 0,
  stallAfterTokens: null,
  dropEventRate: 0,
  eventDelayMs: 0,
  unhealthy: false,
  paused: false,
}

const podFields = z.strictObject({
  /** Frame 0 of its KV events is kv@<pod>@<model>, so no @ in it. */
  podName: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[^@\s]+$/, 'must not contain @ or spaces'),
  modelName: z.string().min(1),
  profile: GpuProfile,
  /** 0 picks a free port. */
  httpPort: z.int().min(0).max(65_535),
  /**
   * HTTP and the KV-event sockets listen here; 0.0.0.0 or :: for every interface. Pods on
   * distinct addresses (127.0.0.2, 127.0.0.3, … on Linux) can share ports, as in a cluster.
   */
  host: z.string().default('127.0.0.1'),
  /** KV events PUB and replay ROUTER ports; 0 picks a free port. */
  zmqPort: z.int().min(0).max(65_535),
  replayPort: z.int().min(0).max(65_535),
  eventEncoding: z.enum(['map', 'array']).default('map'),
  /** Wall clock runs this many times faster than the modelled GPU. */
  timeScale: z.number().positive().max(10_000).default(1),
  seed: z.int().default(0),
  /**
   * The model's tokenizer: a built-in name or a Hugging Face model directory. The pod loads
   * it through its own path (`sim/model/`), not the router's, so agreement is tested.
   */
  tokenizer: z.string().min(1).default('qwen3'),
  /** vLLM's --enable-prompt-tokens-details: usage.prompt_tokens_details.cached_tokens, when not 0. */
  enablePromptTokensDetails: z.boolean().default(false),
  /**
   * vLLM's --data-parallel-size: engines behind the one HTTP server, each with its own
   * cache, scheduler and KV-event sockets on zmqPort + rank and replayPort + rank.
   */
  dataParallelSize: z.int().min(1).max(64).default(1),
  /** vLLM's --lora-modules names: a request for one of them runs under that adapter. */
  loraAdapters: z.array(z.string().min(1)).default([]),
  /**
   * vLLM's --runner: `generate` serves the completions APIs, `pooling` serves
   * /v1/embeddings instead (prefill only; no prefix caching, no KV events unless
   * enablePrefixCaching).
   */
  runner: z.enum(['generate', 'pooling']).default('generate'),
  /**
   * vLLM's --enable-prefix-caching. Absent: vLLM's default for the simulated model, on for
   * a generate pod, off for a pooling one (an encoder or a MEAN/CLS pooling model); true on
   * a pooling pod is a causal LAST-pooling model such as Qwen3-Embedding, whose inputs
   * reuse and cache blocks and publish KV events as prompts do (docs/vllm-wire.md,
   * "Embeddings"). A generate pod always caches: false is refused there.
   */
  enablePrefixCaching: z.boolean().optional(),
  /** The pooling model's hidden size: the length of its embedding vectors. */
  embeddingSize: z.int().min(1).max(16_384).default(1024),
  faults: SimFaultsPatch.default({}),
  /** Which of vLLM's KV-event variants the pod emits (offload tier, hybrid groups, …). */
  kvEvents: SimKvEventsOptions.prefault({}),
})
export const SimPodConfig = podFields.refine(
  (config) => config.enablePrefixCaching !== false || config.runner === 'pooling',
  {
    message: 'a generate pod always caches prefixes (--no-enable-prefix-caching is not simulated)',
    path: ['enablePrefixCaching'],
  },
)
export type SimPodConfig = z.infer<typeof SimPodConfig>
export type SimPodConfigInput = z.input<typeof SimPodConfig>

/** vLLM's topic convention as llm-d uses it: kv@<pod>@<model>. */
export function kvEventTopic(config: Pick<SimPodConfig, 'podName' | 'modelName'>): string {
  return `kv@${config.podName}@${config.modelName}`
}

/** Whether the pod's engines cache prefixes: the option, else vLLM's default for its runner. */
export function prefixCachingEnabled(
  config: Pick<SimPodConfig, 'runner' | 'enablePrefixCaching'>,
): boolean {
  return config.enablePrefixCaching ?? config.runner === 'generate'
}
