import { z } from 'zod'
import { l40s27bFp8, numGpuBlocks } from '../../../shared/gpu/gpu-profile.ts'

/** Requests per benchmark, as GuideLLM's --max-requests. */
export const BenchMaxRequests = z
  .int()
  .positive()
  .default(600)
  .describe('Requests per benchmark, every turn counting')

/** What a workload runs without --max-requests: every preset, and a --data workload. */
export const defaultMaxRequests: number = BenchMaxRequests.parse(undefined)

/**
 * The figures the original article publishes for a workload (docs/architecture.md §7), the
 * targets the headline table sets beside ours.
 */
export interface PublishedNumbers {
  roundRobin: { ttftS: number; e2eS: number | null }
  kinference: { ttftS: number; e2eS: number | null }
  /** Peak throughput of Kinference as a multiple of round robin's, when published. */
  peakRatio: number | null
}

/**
 * Fractions of a workload's fluid throughput bound at which every preset runs, the one
 * rule for every grid: open loop, that many times the bound's requests/s; closed loop,
 * that many times the streams that would carry the bound's rate at the zero-queue service
 * time (Little's law); a trace, the speed that gives that rate. The bound is a property of the request stream and the pool
 * (docs/benchmark-bounds.md), so no router's behaviour picks the rates.
 */
export const gridFractions: readonly number[] = [0.125, 0.25, 0.5, 0.75, 0.9, 1, 1.25, 1.5]

/**
 * A named workload: GuideLLM data (or a trace) and a load profile. Its rates follow the
 * one grid rule (`gridFractions`) unless it is a fixed scenario (`rates`), so every router
 * runs at the same loads.
 */
export interface BenchPreset {
  name: string
  description: string
  data: string
  profile: 'poisson' | 'concurrent' | 'trace'
  /** A fixed scenario's loads (requests/s, streams or trace speeds); null: the grid rule. */
  rates: readonly number[] | null
  /** Requests per benchmark (every turn counts), as GuideLLM's --max-requests. */
  maxRequests: number
  published: PublishedNumbers | null
  /** Pods' GPU profile when not the default l40s-27b-fp8. */
  gpuProfile?: string
  /** Pods in the pool when not `defaultBenchPods` (--pods overrides it). */
  pods?: number
  /**
   * The pods' CPU tier (vLLM's OffloadingConnector) as a multiple of their GPU's KV blocks;
   * absent or 0: none (--cpu-tier overrides it).
   */
  cpuTier?: number
}

/** The pool's size when neither --pods nor the preset gives one. */
export const defaultBenchPods = 3

/**
 * The audit's prefix-heavy traffic (48 system prompts of 3,000 tokens, each followed by 256
 * unique tokens; 256 out), one data set run on several pool sizes. Its prefixes (144k
 * tokens) overflow one pod's KV cache (94k) and fit in three pods' (283k), so the pool
 * size, not the data, decides how much of it a router can keep resident.
 */
const prefixHeavyData = 'prefix_count=48,prefix_tokens=3000,prompt_tokens=256,output_tokens=256'

/** One default pod's KV cache in tokens. */
const podKvTokens = numGpuBlocks(l40s27bFp8) * l40s27bFp8.blockSize

function prefixHeavy(pods: number): BenchPreset {
  return {
    name: `prefix-heavy-${pods}pods`,
    description: `48 system prompts of 3000 tokens, drawn uniformly, each followed by 256 unique tokens (the prefix is 92% of the prompt); 256 out; ${pods} pods. The prefixes (144k tokens) overflow one pod’s KV cache (94k) and fill ${Math.round((48 * 3000 * 100) / (pods * podKvTokens))}% of the pool’s.`,
    data: prefixHeavyData,
    profile: 'poisson',
    rates: null,
    maxRequests: defaultMaxRequests,
    published: null,
    pods,
  }
}

/** Prompt and output lengths of the prefix-bucket workloads: 256±128 tokens each, clipped. */
const bucketedLengths = {
  prompt_tokens: 256,
  prompt_tokens_stdev: 128,
  prompt_tokens_min: 32,
  prompt_tokens_max: 1024,
  output_tokens: 256,
  output_tokens_stdev: 128,
  output_tokens_min: 16,
  output_tokens_max: 1024,
}

export const benchPresets: Record<string, BenchPreset> = {
  'shared-prefix': {
    name: 'shared-prefix',
    description:
      '32 system prompts of 4096 tokens, drawn uniformly, each followed by 256 unique tokens; 256 out. The prefixes (131k tokens) overflow one pod’s KV cache (94k) and fit in the pool’s (283k).',
    data: 'prefix_count=32,prefix_tokens=4096,prompt_tokens=256,output_tokens=256',
    profile: 'poisson',
    rates: null,
    maxRequests: defaultMaxRequests,
    published: {
      roundRobin: { ttftS: 6.88, e2eS: 20.5 },
      kinference: { ttftS: 0.31, e2eS: 11.3 },
      peakRatio: 7.4,
    },
  },
  'multi-turn': {
    name: 'multi-turn',
    description:
      '5-turn conversations: one of 8 system prompts (1024 tokens), a 2048-token first question, 256-token follow-ups carrying the real history; 256 out per turn. Closed loop.',
    data: 'turns=5,prefix_count=8,prefix_tokens=1024,first_prompt_tokens=2048,prompt_tokens=256,output_tokens=256',
    profile: 'concurrent',
    rates: null,
    maxRequests: defaultMaxRequests,
    published: {
      roundRobin: { ttftS: 1.7, e2eS: 13.4 },
      kinference: { ttftS: 0.59, e2eS: 9.1 },
      peakRatio: 3.5,
    },
  },
  'multi-turn-cpu': {
    name: 'multi-turn-cpu',
    description:
      'multi-turn’s conversations on pods with a CPU tier (vLLM’s OffloadingConnector) 4x their GPU’s KV blocks: histories the GPU evicts can be loaded back over the host link instead of recomputed. Closed loop.',
    data: 'turns=5,prefix_count=8,prefix_tokens=1024,first_prompt_tokens=2048,prompt_tokens=256,output_tokens=256',
    profile: 'concurrent',
    rates: null,
    maxRequests: defaultMaxRequests,
    published: null,
    cpuTier: 4,
  },
  'no-prefix': {
    name: 'no-prefix',
    description:
      'The control: 4352 unique prompt tokens (shared-prefix’s total), 256 out, nothing shared. A KV-aware router can only match a good balancer.',
    data: 'prompt_tokens=4352,output_tokens=256',
    profile: 'poisson',
    rates: null,
    maxRequests: defaultMaxRequests,
    published: {
      roundRobin: { ttftS: 6.92, e2eS: null },
      kinference: { ttftS: 6.83, e2eS: null },
      peakRatio: null,
    },
  },
  'mixed-tenants': {
    name: 'mixed-tenants',
    description:
      'Four tenants: 40% share one 6144-token prompt (more than one pod can serve), 30% eight of 4096, 20% sixty-four of 2048, 10% nothing shared; prompt 256±128 (32–1024) and output 256±128 (16–1024) tokens.',
    data: JSON.stringify({
      ...bucketedLengths,
      prefix_buckets: [
        { bucket_weight: 40, prefix_count: 1, prefix_tokens: 6144 },
        { bucket_weight: 30, prefix_count: 8, prefix_tokens: 4096 },
        { bucket_weight: 20, prefix_count: 64, prefix_tokens: 2048 },
        { bucket_weight: 10, prefix_count: 1, prefix_tokens: 0 },
      ],
    }),
    profile: 'poisson',
    rates: null,
    maxRequests: defaultMaxRequests,
    published: null,
  },
  b2b: {
    name: 'b2b',
    description:
      'llm-d’s b2b-saas shape on this pool: 34 system prompts of 6000 tokens (204k tokens, 72% of the pool’s 283k-token KV cache, as llm-d sized its prefix set to 73% of its cluster’s), drawn uniformly, each followed by a 1200-token question; 1000 out.',
    data: 'prefix_count=34,prefix_tokens=6000,prompt_tokens=1200,output_tokens=1000',
    profile: 'poisson',
    rates: null,
    maxRequests: defaultMaxRequests,
    published: null,
  },
  'fan-out': {
    name: 'fan-out',
    description:
      'Bursts of 16 siblings arriving within 50 ms that share a 4096-token prefix no pod has seen (a fresh one per burst), each with 256 tokens of its own; 256 out. Rates count requests.',
    data: 'fan_out=16,fan_out_window_ms=50,prefix_tokens=4096,prompt_tokens=256,output_tokens=256',
    profile: 'poisson',
    rates: null,
    maxRequests: defaultMaxRequests,
    published: null,
  },
  reasoning: {
    name: 'reasoning',
    description:
      'Decode-bound, after inference-perf’s reasoning shape: one 250-token system prompt, 1000-token questions, 8000 tokens out.',
    data: 'prefix_count=1,prefix_tokens=250,prompt_tokens=1000,output_tokens=8000',
    profile: 'poisson',
    rates: null,
    maxRequests: 200,
    published: null,
  },
  'overload-closed': {
    name: 'overload-closed',
    description:
      'Past saturation, closed loop: the shared-prefix data at 300 streams, 3000 requests. About 300 × 512 private tokens plus the prefixes ask for more KV than the pool has.',
    data: 'prefix_count=32,prefix_tokens=4096,prompt_tokens=256,output_tokens=256',
    profile: 'concurrent',
    rates: [300],
    maxRequests: 3000,
    published: null,
  },
  mooncake: {
    name: 'mooncake',
    description:
      'The Mooncake synthetic trace (data/traces: 3,993 requests, mean input ~15k tokens in 512-token hash blocks, Poisson arrivals) replayed on h200-32b-fp8 pods (131k context); rates are replay speeds.',
    data: 'trace:mooncake-synthetic',
    profile: 'trace',
    rates: null,
    maxRequests: 1000,
    published: null,
    gpuProfile: 'h200-32b-fp8',
  },
  // The independent audit's shapes (docs/benchmarks.md, "Audit presets"), with parameters
  // set from its descriptions before any run: not part of the targets suite.
  'prefix-heavy-3pods': prefixHeavy(3),
  'prefix-heavy-4pods': prefixHeavy(4),
  'prefix-heavy-6pods': prefixHeavy(6),
  'long-outputs': {
    name: 'long-outputs',
    description:
      'Long outputs of varied length: 16 system prompts of 2048 tokens, 512±256 unique tokens (64–2048), output 2048±1024 tokens (128–8192, a clipped Gaussian): decode time varies by an order of magnitude between requests, so counting requests is not counting work.',
    data: JSON.stringify({
      prefix_count: 16,
      prefix_tokens: 2048,
      prompt_tokens: 512,
      prompt_tokens_stdev: 256,
      prompt_tokens_min: 64,
      prompt_tokens_max: 2048,
      output_tokens: 2048,
      output_tokens_stdev: 1024,
      output_tokens_min: 128,
      output_tokens_max: 8192,
    }),
    profile: 'poisson',
    rates: null,
    maxRequests: defaultMaxRequests,
    published: null,
  },
  'prefix-buckets': {
    name: 'prefix-buckets',
    description:
      'A mixed set of prefix buckets, popularity falling as the set grows: 40% of requests share 4 prompts of 8192 tokens, 30% 16 of 2048, 20% 64 of 1024, 10% 256 of 512 (262k prefix tokens in all, 93% of the three pods’ 283k-token KV cache); prompt 256±128 (32–1024) and output 256±128 (16–1024) tokens.',
    data: JSON.stringify({
      ...bucketedLengths,
      prefix_buckets: [
        { bucket_weight: 40, prefix_count: 4, prefix_tokens: 8192 },
        { bucket_weight: 30, prefix_count: 16, prefix_tokens: 2048 },
        { bucket_weight: 20, prefix_count: 64, prefix_tokens: 1024 },
        { bucket_weight: 10, prefix_count: 256, prefix_tokens: 512 },
      ],
    }),
    profile: 'poisson',
    rates: null,
    maxRequests: defaultMaxRequests,
    published: null,
  },
}

/** The headline table (--suite headline): these three, in this order. */
export const headlineSuite = ['shared-prefix', 'multi-turn', 'no-prefix'] as const

/** Median TTFT a rate must stay under to count toward peak throughput. */
export const peakTtftSloMs = 1_000
