import { z } from 'zod'
import type { StrategyRegistry } from '../routing/strategies/define-strategy.ts'
import { builtinStrategies } from '../routing/strategies/strategy-registry.ts'
import { builtinTokenizers, TokenizerSource } from './builtin-tokenizers.ts'
import { CommonStatus } from './condition.ts'
import { namedList } from './named-list.ts'
import { LabelSelector } from './object-meta.ts'
import { routingSpecSchema } from './routing-spec.ts'

export const Port = z.int().min(1).max(65_535)

/** The name of an upstream InferencePool in the pool's namespace (a DNS-1123 subdomain). */
export const UpstreamPoolRef = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(253)
    .regex(
      /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
      'must be a DNS-1123 subdomain',
    )
    .describe('Name of the inference.networking.k8s.io/v1 InferencePool, in this namespace.'),
})

const modelNameChars = '[A-Za-z0-9][A-Za-z0-9._:/@+-]*'

/** A model name as clients send it and as vLLM serves it (`--served-model-name`). */
export const ModelName = z
  .string()
  .min(1)
  .max(256)
  .regex(new RegExp(`^${modelNameChars}$`), 'letters, digits and . _ : / @ + - only')

/** A model name, or "*" for any model. */
export const ModelPattern = z
  .string()
  .min(1)
  .max(256)
  .regex(new RegExp(`^(\\*|${modelNameChars})$`), 'must be a model name or "*"')
export type ModelName = z.infer<typeof ModelName>

/** Which of vLLM's runners serves a model, and so which OpenAI API it answers. */
export const ModelTask = z.enum(['Generate', 'Embed'])
export type ModelTask = z.infer<typeof ModelTask>

/** A served model's task, Generate when the spec sets none. */
export function taskOf(model: { task?: ModelTask | undefined }): ModelTask {
  return model.task ?? 'Generate'
}

export const ServedModel = z.strictObject({
  name: ModelPattern.describe(
    'Served model name, as vLLM’s --served-model-name; or "*" for whatever model a request names (the pods decide what they serve; requests are counted with this tokenizer, and the pods’ metrics are read whatever their model_name).',
  ),
  tokenizer: TokenizerSource.describe(
    `Tokenizer the scorer uses to count and hash prompts exactly as the pod does: a built-in (${builtinTokenizers.join(', ')}) or the path, as the scorer sees it, of a Hugging Face model directory (tokenizer.json, tokenizer_config.json, optional chat_template.jinja), a cache snapshot (models--ORG--NAME/snapshots/REV) or a cache repository (models--ORG--NAME).`,
  ),
  maxContextTokens: z
    .int()
    .positive()
    .max(10_000_000)
    .describe('Longest prompt plus output the model accepts (vLLM --max-model-len).'),
  loraAdapters: z
    .array(ModelName)
    .max(64)
    .optional()
    .describe('LoRA adapters served on top of this model, by name.'),
  // No schema default: a default inside a list item is written by the API server, so the
  // list differs from the applied one and `kubectl apply` would patch every pool each time.
  task: ModelTask.optional().describe(
    'What the model serves: Generate (the default; vLLM’s generate runner: /v1/chat/completions, /v1/completions, /v1/responses) or Embed (its pooling runner, --runner pooling: /v1/embeddings). A request for the other API is refused with 400 before it reaches a pod. An Embed model is routed on load alone, or also on its pods’ prefix cache when the pool sets kvEvents (a last-token pooling model run with prefix caching).',
  ),
})
export type ServedModel = z.infer<typeof ServedModel>

export const KvEventsEndpoint = z.strictObject({
  port: Port.default(5557).describe('ZMQ PUB port of vLLM’s --kv-events-config endpoint.'),
  replayPort: Port.optional().describe(
    'ZMQ ROUTER replay port. Without it a gap in sequence numbers cannot be repaired, and the pod is scored cache-cold until its index is trustworthy again.',
  ),
  topic: z
    .string()
    .max(256)
    .default('kv@{pod}@{model}')
    .describe('Topic the pods publish on; {pod} and {model} are substituted.'),
})

export const MetricsEndpoint = z.strictObject({
  port: Port.optional().describe('Port serving Prometheus /metrics; default targetPort.'),
  path: z.string().startsWith('/').max(256).default('/metrics').describe('Path of the metrics.'),
  intervalMs: z.int().min(10).max(60_000).default(100).describe('Scrape period.'),
  stalenessMs: z
    .int()
    .min(10)
    .max(600_000)
    .default(2_000)
    .describe(
      'Metrics older than this are not trusted; the pod is scored from router-side load only.',
    ),
})

export const SchedulerLimits = z.strictObject({
  maxNumBatchedTokens: z
    .int()
    .positive()
    .default(2_048)
    .describe('vLLM --max-num-batched-tokens: token budget of one engine step.'),
  maxNumSeqs: z
    .int()
    .positive()
    .default(256)
    .describe('vLLM --max-num-seqs: most running requests.'),
  numGpuBlocks: z
    .int()
    .positive()
    .optional()
    .describe('KV-cache blocks per pod; default read from vllm:cache_config_info.'),
})

export const SaturationSpec = z.strictObject({
  queueDepthThreshold: z
    .int()
    .positive()
    .default(5)
    .describe('Waiting requests at which a pod counts as fully saturated.'),
  kvCacheUtilThreshold: z
    .number()
    .gt(0)
    .max(1)
    .default(0.8)
    .describe('KV-cache usage at which a pod counts as fully saturated.'),
  predictedTtftMs: z
    .number()
    .positive()
    .optional()
    .describe(
      'If set, the pool is also saturated when the best pod’s predicted TTFT exceeds this.',
    ),
})

/**
 * A pool's spec with the strategies of a registry in its `routing` field: the built-ins for
 * InferencePoolSpec, more where a caller registers its own.
 */
export function inferencePoolSpecSchema(strategies: StrategyRegistry) {
  return z
    .strictObject({
      selector: LabelSelector.optional().describe(
        'Selects the pool’s pods by label. Required unless upstreamPoolRef is set.',
      ),
      targetPort: Port.optional().describe(
        'Port of the vLLM OpenAI-compatible server on each pod. Required unless upstreamPoolRef is set.',
      ),
      upstreamPoolRef: UpstreamPoolRef.optional().describe(
        'An upstream InferencePool (inference.networking.k8s.io/v1) of this namespace whose endpointPickerRef names Kinference’s Endpoint Picker: this pool takes its pods (spec.selector) and ports (spec.targetPorts, each a distinct endpoint) from it, and this spec gives everything else. Then selector and targetPort are not set.',
      ),
      kvEvents: KvEventsEndpoint.optional().describe(
        'Where pods publish KV-cache events. Without it, cache-aware strategies use an approximate index learnt from routing decisions.',
      ),
      metrics: MetricsEndpoint.prefault({}).describe('Where and how often /metrics is scraped.'),
      models: namedList(ServedModel, { min: 1, max: 16 }).describe(
        'Models every pod of the pool serves.',
      ),
      blockSize: z
        .int()
        .min(1)
        .max(256)
        .default(16)
        .describe('vLLM --block-size: tokens per KV-cache block, and the unit of prefix hashing.'),
      scheduler: SchedulerLimits.prefault({}).describe(
        'vLLM scheduler limits the TTFT predictor models.',
      ),
      gpuProfile: z
        .string()
        .min(1)
        .max(128)
        .describe('Hardware and model profile for initial TTFT estimates, e.g. l40s-27b-fp8.'),
      routing: routingSpecSchema(strategies).prefault({}),
      ttftSloMs: z
        .number()
        .positive()
        .optional()
        .describe('Target TTFT. Pods predicted above it are avoided while another pod meets it.'),
      saturation: SaturationSpec.prefault({}).describe(
        'When a pod, and the pool, count as saturated.',
      ),
      failureMode: z
        .enum(['FailOpen', 'FailClose'])
        .default('FailOpen')
        .describe(
          'FailOpen: when the index or metrics are unavailable, route by load only. FailClose: answer 503 instead.',
        ),
    })
    .superRefine((spec, ctx) => {
      for (const problem of podSourceProblems(spec)) ctx.addIssue({ code: 'custom', ...problem })
    })
    .meta({
      'x-kubernetes-validations': [
        {
          rule: 'has(self.upstreamPoolRef) ? !has(self.selector) && !has(self.targetPort) : has(self.selector) && has(self.targetPort)',
          message: 'set selector and targetPort, or upstreamPoolRef (which gives both), not both',
        },
      ],
    })
}

/**
 * A pool's pods and ports come from its own selector and targetPort, or from the upstream
 * pool it names: exactly one of the two.
 */
function podSourceProblems(spec: {
  selector?: unknown
  targetPort?: unknown
  upstreamPoolRef?: unknown
}): { path: string[]; message: string }[] {
  const own = (['selector', 'targetPort'] as const).filter((field) => spec[field] !== undefined)
  if (spec.upstreamPoolRef !== undefined)
    return own.map((field) => ({
      path: [field],
      message: `not allowed with upstreamPoolRef: the upstream pool gives the ${field === 'selector' ? 'selector' : 'ports'}`,
    }))
  return (['selector', 'targetPort'] as const)
    .filter((field) => spec[field] === undefined)
    .map((field) => ({ path: [field], message: 'required unless upstreamPoolRef is set' }))
}

export const InferencePoolSpec = inferencePoolSpecSchema(builtinStrategies)
export type InferencePoolSpec = z.infer<typeof InferencePoolSpec>

export const InferencePoolStatus = CommonStatus.extend({
  pods: z.int().min(0).optional().describe('Pods matched by the selector.'),
  readyPods: z.int().min(0).optional().describe('Pods ready and reporting fresh metrics.'),
  saturation: z.number().min(0).optional().describe('Mean pod saturation: 0 idle, 1 saturated.'),
})
export type InferencePoolStatus = z.infer<typeof InferencePoolStatus>
