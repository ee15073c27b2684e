import { z } from 'zod'
import { CommonStatus } from './condition.ts'
import { ModelName } from './inference-pool.ts'
import { LabelSelector, LocalObjectReference } from './object-meta.ts'

export const InferenceWorkerSetSpec = z.strictObject({
  poolRef: LocalObjectReference.describe('The InferencePool these workers belong to.'),
  selector: LabelSelector.describe('Pods of the pool that form this set.'),
  gpu: z
    .strictObject({
      type: z.string().min(1).max(64).describe('Accelerator model, e.g. L40S or H100.'),
      count: z.int().min(1).max(64).default(1).describe('Accelerators per pod.'),
      profile: z
        .string()
        .min(1)
        .max(128)
        .optional()
        .describe('GPU profile for these pods when it differs from the pool’s.'),
    })
    .describe('The hardware of these workers.'),
  dataParallelSize: z
    .int()
    .min(1)
    .max(64)
    .default(1)
    .describe(
      'vLLM --data-parallel-size of each pod: engines (DP ranks) behind its one API server, each with its own KV cache. Rank r publishes KV events on the pool’s kvEvents.port + r and answers replays on replayPort + r; the scorer indexes, scrapes (the engine label) and routes to (X-data-parallel-rank) each rank as an endpoint of its own, named <pod>/dp<r>.',
    ),
  loraAdapters: z
    .array(ModelName)
    .max(64)
    .optional()
    .describe('LoRA adapters loaded on these workers only.'),
  capacity: z
    .strictObject({
      maxConcurrentRequests: z
        .int()
        .positive()
        .optional()
        .describe('Most requests in flight per pod.'),
      kvCacheTokens: z
        .int()
        .positive()
        .optional()
        .describe('KV-cache capacity per pod, in tokens.'),
    })
    .optional()
    .describe('Capacity hints used before metrics arrive.'),
  prefillTokensPerSecond: z
    .number()
    .positive()
    .optional()
    .describe('Initial prefill rate per pod for the TTFT predictor, before online calibration.'),
  weight: z
    .int()
    .min(0)
    .max(1_000)
    .default(100)
    .describe('Relative share of traffic for weighted strategies; 0 drains the set.'),
  relativeCost: z
    .number()
    .min(0)
    .default(1)
    .describe('Cost of these workers relative to others in the pool (e.g. per GPU-hour).'),
})
export type InferenceWorkerSetSpec = z.infer<typeof InferenceWorkerSetSpec>

export const InferenceWorkerSetStatus = CommonStatus.extend({
  readyPods: z.int().min(0).optional().describe('Pods of this set ready to serve.'),
})
export type InferenceWorkerSetStatus = z.infer<typeof InferenceWorkerSetStatus>
