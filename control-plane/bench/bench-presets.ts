import { z } from 'zod'
import { RoutingStrategyName } from '../../shared/crd/routing-strategy.ts'

/** Requests per benchmark, as GuideLLM's --max-requests. */
export const BenchMaxRequests = z
  .int()
  .positive()
  .default(600)
  .describe('Requests per benchmark, every turn counting')

/** What a workload runs without --max-requests: every preset, and a --data workload. */
export const defaultMaxRequests: number = BenchMaxRequests.parse(undefined)

/** The brief's published numbers (docs/architecture.md), for the side-by-side table. */
export interface BriefNumbers {
  roundRobin: { ttftS: number; e2eS: number | null }
  kinference: { ttftS: number; e2eS: number | null }
  /** Peak throughput of Kinference as a multiple of round robin's, when published. */
  peakRatio: number | null
}

/**
 * A named workload: GuideLLM data, a load profile and a fixed rate list, so every router
 * runs at the same loads. The rates were chosen from round robin's behaviour alone (its
 * median TTFT is several seconds at the top rate, as in the brief), never from ours.
 */
export interface BenchPreset {
  name: string
  description: string
  data: string
  profile: 'poisson' | 'concurrent'
  /** Requests/s (poisson) or streams (concurrent), ascending. */
  rates: readonly number[]
  /** Requests per benchmark (every turn counts), as GuideLLM's --max-requests. */
  maxRequests: number
  brief: BriefNumbers | null
}

export const benchPresets: Record<string, BenchPreset> = {
  'shared-prefix': {
    name: 'shared-prefix',
    description:
      '32 system prompts of 4096 tokens, drawn uniformly, each followed by 256 unique tokens; 256 out. The prefixes (131k tokens) overflow one pod’s KV cache (94k) and fit in the pool’s (283k).',
    data: 'prefix_count=32,prefix_tokens=4096,prompt_tokens=256,output_tokens=256',
    profile: 'poisson',
    // Round robin: 0.4 s at 3/s, ~7 s at 4/s (the brief's 6.88 s), far gone at 6 and 8.
    // The rates above its collapse are there to find the others' peak.
    rates: [0.5, 1, 2, 3, 4, 6, 8],
    maxRequests: defaultMaxRequests,
    brief: {
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
    // Up to the concurrency where round robin's median TTFT is the brief's 1.70 s
    // (docs/architecture.md §7): 0.66 s at 64 streams, 1.76 s at 80. (At 96 the histories no
    // longer fit the pool's KV cache and every router is at several seconds.)
    rates: [16, 32, 48, 64, 80],
    maxRequests: defaultMaxRequests,
    brief: {
      roundRobin: { ttftS: 1.7, e2eS: 13.4 },
      kinference: { ttftS: 0.59, e2eS: 9.1 },
      peakRatio: 3.5,
    },
  },
  'no-prefix': {
    name: 'no-prefix',
    description:
      'The control: 4352 unique prompt tokens (shared-prefix’s total), 256 out, nothing shared. A KV-aware router can only match a good balancer.',
    data: 'prompt_tokens=4352,output_tokens=256',
    profile: 'poisson',
    // Shared-prefix's rates up to the one where round robin matches the brief there
    // (~7 s at 4/s); without a shared prefix every router is far past saturation by 3/s.
    rates: [0.5, 1, 2, 3, 4],
    maxRequests: defaultMaxRequests,
    brief: {
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
      prompt_tokens: 256,
      prompt_tokens_stdev: 128,
      prompt_tokens_min: 32,
      prompt_tokens_max: 1024,
      output_tokens: 256,
      output_tokens_stdev: 128,
      output_tokens_min: 16,
      output_tokens_max: 1024,
      prefix_buckets: [
        { bucket_weight: 40, prefix_count: 1, prefix_tokens: 6144 },
        { bucket_weight: 30, prefix_count: 8, prefix_tokens: 4096 },
        { bucket_weight: 20, prefix_count: 64, prefix_tokens: 2048 },
        { bucket_weight: 10, prefix_count: 1, prefix_tokens: 0 },
      ],
    }),
    profile: 'poisson',
    // Round robin: 0.17 s at 6/s, 1.1 s at 8, ~6 s at 10.
    rates: [2, 4, 6, 8, 10],
    maxRequests: defaultMaxRequests,
    brief: null,
  },
}

/** The brief's table: these three, in this order. */
export const briefSuite = ['shared-prefix', 'multi-turn', 'no-prefix'] as const

/** Every strategy the scorer can run: the baselines, then ours. */
export const allRouters: readonly RoutingStrategyName[] = [
  ...RoutingStrategyName.options.filter((name) => name !== 'kinference'),
  'kinference',
]

/** Median TTFT a rate must stay under to count toward peak throughput. */
export const peakTtftSloMs = 1_000
