import { z } from 'zod'

/** The strategies the scorer can run; the baselines follow their projects' published defaults. */
export const RoutingStrategyName = z
  .enum([
    'kinference',
    'round-robin',
    'least-request',
    'gie-default',
    'llmd-sticky',
    'dynamo',
    'sglang-cache-aware',
  ])
  .describe(
    'kinference: lowest predicted TTFT from KV overlap and queued prefill. round-robin: a plain Kubernetes Service. least-request: fewest requests in flight. gie-default: Gateway API Inference Extension default (queue 2, kv-util 2, approximate prefix 3). llmd-sticky: llm-d sticky-until-saturated. dynamo: NVIDIA Dynamo block cost. sglang-cache-aware: SGLang cache-aware policy.',
  )
export type RoutingStrategyName = z.infer<typeof RoutingStrategyName>

const fraction = z.number().min(0).max(1)

export const KinferenceParameters = z.strictObject({
  speculativeTtlMs: z
    .int()
    .min(0)
    .max(60_000)
    .default(2_000)
    .describe(
      'How long blocks of a routed request count as cached on its pod before the pod’s own KV events confirm them.',
    ),
  prefillTokensPerSecond: z
    .number()
    .positive()
    .optional()
    .describe('Initial prefill rate per pod; default from the GPU profile, then fitted online.'),
  overheadMs: z
    .number()
    .min(0)
    .optional()
    .describe(
      'Initial fixed TTFT overhead per pod; default from the GPU profile, then fitted online.',
    ),
  onlineCalibration: z
    .boolean()
    .default(true)
    .describe('Re-fit prefill rate and overhead per pod from observed TTFTs.'),
  forgettingFactor: z
    .number()
    .min(0.5)
    .max(1)
    .default(0.98)
    .describe('Recursive-least-squares forgetting factor: closer to 1 remembers longer.'),
  lateBinding: z
    .boolean()
    .default(false)
    .describe(
      'Hold a request in the scorer while its best pod cannot start it (KV memory full, prefill queued), and route it again when pods report progress, instead of queueing it inside one pod.',
    ),
  copyHeadroom: fraction
    .default(0.85)
    .describe(
      'A pod may take a copy of a prefix another pod already holds only while its KV-cache usage stays under this fraction with the copy: in a pool short of memory a copy evicts what other requests need next.',
    ),
  maxHoldMs: z
    .int()
    .min(0)
    .max(600_000)
    .default(30_000)
    .describe('Longest a request is held by late binding before it goes to its best pod anyway.'),
  expectedOutputTokens: z
    .int()
    .positive()
    .max(1_000_000)
    .default(256)
    .describe(
      'Output tokens the memory outlook assumes for a request that sets no max_tokens (vLLM would allow up to the context length); a request that sets one is planned with its own.',
    ),
  driftTolerance: fraction
    .default(0.25)
    .describe(
      'Largest tolerated mean relative error between predicted and reported cached tokens before a pod is demoted from precise to approximate scoring.',
    ),
})

export type KinferenceParameters = z.infer<typeof KinferenceParameters>

export const GieDefaultParameters = z.strictObject({
  queueWeight: z
    .number()
    .min(0)
    .default(2)
    .describe('Weight of the queue scorer (GIE pkg/epp/config/loader/defaults.go).'),
  kvCacheUtilWeight: z
    .number()
    .min(0)
    .default(2)
    .describe('Weight of the KV-utilisation scorer (GIE pkg/epp/config/loader/defaults.go).'),
  prefixWeight: z
    .number()
    .min(0)
    .default(3)
    .describe('Weight of the approximate prefix scorer (GIE pkg/epp/config/loader/defaults.go).'),
  autoTune: z
    .boolean()
    .default(true)
    .describe(
      'Size each pod’s prefix LRU from its num_gpu_blocks, as GIE’s approximate prefix producer does by default (autoTune, approximateprefix/types.go); lruCapacityPerServer applies to a pod whose capacity is unknown.',
    ),
  lruCapacityPerServer: z
    .int()
    .positive()
    .default(31_250)
    .describe(
      'Blocks remembered per pod by the approximate prefix index when autoTune is off or the pod’s capacity is unknown (GIE default, approximateprefix/types.go).',
    ),
  maxPrefixBlocksToMatch: z
    .int()
    .positive()
    .default(256)
    .describe('Longest prefix matched, in blocks (GIE default, approximateprefix/types.go).'),
})

export const LlmdStickyParameters = z.strictObject({
  affinityThreshold: fraction
    .default(0.8)
    .describe(
      'Prefix match ratio at or above which a pod is sticky (llm-d prefix-cache-affinity-filter default).',
    ),
  explorationProbability: fraction
    .default(0)
    .describe(
      'Probability of ignoring stickiness for one request: 0 in the filter’s current defaults and in every run of the sticky-until-saturated blog (an older filter README said 0.01).',
    ),
  maxTtftPenaltyMs: z
    .number()
    .min(0)
    .default(18_000)
    .describe(
      'T_max: stickiness breaks when the best sticky pod’s queued uncached prefill, in time at the peak prefill throughput, exceeds the best cold pod’s by more than this; 0 never breaks it. 18,000 is the filter’s shipped default (llm-d prefix-cache-affinity-filter), τ = peak throughput × T_max in tokens.',
    ),
  peakPrefillTokensPerSecond: z
    .number()
    .positive()
    .optional()
    .describe(
      'R_peak of the release gate, tokens/s. Default: calibrated from the pool’s GPU profile as llm-d’s calibrate.sh measures it, one full chunk of max_num_batched_tokens over its prefill time (the filter’s own 15,928 is Qwen3-32B on 2× H100 and is to be re-measured per model and accelerator).',
    ),
  addEstimatedOutputTokens: z
    .boolean()
    .default(false)
    .describe(
      'Also count an output estimate in a pod’s tokens in flight until the request ends (llm-d in-flight-load-producer addEstimatedOutputTokens, off by default).',
    ),
  outputRatio: z
    .number()
    .min(0)
    .default(1.5)
    .describe(
      'Estimated output per prompt token when addEstimatedOutputTokens is on, capped by the request’s max_tokens (llm-d in-flight-load-producer outputRatio).',
    ),
})

export const DynamoParameters = z.strictObject({
  overlapScoreCredit: z
    .number()
    .min(0)
    .default(1)
    .describe(
      'Credit per cached device block against the prefill load (Dynamo overlap_score_credit, lib/kv-router/src/scheduling/config.rs).',
    ),
  prefillLoadScale: z
    .number()
    .min(0)
    .default(1)
    .describe(
      'Weight of the adjusted prefill blocks in the default cost (Dynamo prefill_load_scale, config.rs).',
    ),
  temperature: z
    .number()
    .min(0)
    .default(0)
    .describe(
      '0 picks the lowest cost; above 0 samples with softmax over normalised costs (Dynamo router_temperature, config.rs).',
    ),
  selectionPolicy: z
    .enum(['default', 'lmetric'])
    .default('default')
    .describe(
      'default: cost = prefill_load_scale × adjusted prefill blocks + decode blocks. lmetric: cost = adjusted prefill blocks × (decode blocks + 1) (Dynamo router_selection_policy, docs/components/router/router-concepts.md).',
    ),
})

export const SglangCacheAwareParameters = z.strictObject({
  cacheThreshold: fraction
    .default(0.3)
    .describe(
      'Match rate above which the best-matching worker is chosen: the router launcher’s default (SGLang sgl-router router_args.py; SMG model_gateway/src/main.rs), not the 0.5 of the Rust struct.',
    ),
  balanceAbsThreshold: z
    .int()
    .min(0)
    .default(64)
    .describe(
      'In-flight gap (max − min) above which, together with the relative test, the least-loaded worker is chosen: launcher default (router_args.py; SMG main.rs), not the struct’s 32.',
    ),
  balanceRelThreshold: z
    .number()
    .min(1)
    .default(1.5)
    .describe(
      'Ratio max / min above which, together with the absolute test, the least-loaded worker is chosen: launcher default (router_args.py; SMG main.rs), not the struct’s 1.1.',
    ),
  evictionIntervalSeconds: z
    .int()
    .positive()
    .default(120)
    .describe(
      'Tree eviction period: launcher default (router_args.py eviction_interval_secs; SMG main.rs eviction_interval), not the struct’s 30.',
    ),
  maxTreeSize: z
    .int()
    .positive()
    .default(2 ** 26)
    .describe(
      'Largest approximate tree per worker, in characters as SGLang counts it (tenant_char_count): launcher default 2^26 (router_args.py; SMG main.rs), not the struct’s 10,000.',
    ),
})

/** Parameter blocks by strategy; a pool may set only the block of its own strategy. */
const parameterBlocks = {
  kinference: 'kinference',
  gieDefault: 'gie-default',
  llmdSticky: 'llmd-sticky',
  dynamo: 'dynamo',
  sglangCacheAware: 'sglang-cache-aware',
} as const satisfies Record<string, RoutingStrategyName>

export const RoutingSpec = z
  .strictObject({
    strategy: RoutingStrategyName.default('kinference'),
    kinference: KinferenceParameters.optional().describe('Parameters of the kinference strategy.'),
    gieDefault: GieDefaultParameters.optional().describe('Parameters of the gie-default strategy.'),
    llmdSticky: LlmdStickyParameters.optional().describe('Parameters of the llmd-sticky strategy.'),
    dynamo: DynamoParameters.optional().describe('Parameters of the dynamo strategy.'),
    sglangCacheAware: SglangCacheAwareParameters.optional().describe(
      'Parameters of the sglang-cache-aware strategy.',
    ),
  })
  .superRefine((routing, ctx) => {
    for (const [block, strategy] of Object.entries(parameterBlocks)) {
      if (
        routing[block as keyof typeof parameterBlocks] !== undefined &&
        routing.strategy !== strategy
      ) {
        ctx.addIssue({
          code: 'custom',
          path: [block],
          message: `parameters for strategy "${strategy}" given, but strategy is "${routing.strategy}"`,
        })
      }
    }
  })
  .meta({
    'x-kubernetes-validations': Object.entries(parameterBlocks).map(([block, strategy]) => ({
      rule: `!has(self.${block}) || self.strategy == '${strategy}'`,
      message: `${block} may only be set when strategy is ${strategy}`,
    })),
  })
  .describe('Routing strategy of the pool and its parameters.')
export type RoutingSpec = z.infer<typeof RoutingSpec>
