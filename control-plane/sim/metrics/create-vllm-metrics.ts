import { KinfError } from '../../../shared/errors/kinf-error.ts'
import {
  type CounterChild,
  createPrometheusRegistry,
  type HistogramChild,
} from '../../metrics/create-prometheus-registry.ts'
import { cacheConfigLabels, type VllmCacheConfig } from './cache-config-labels.ts'
import { build125Buckets, vllmHistogramBuckets } from './vllm-histogram-buckets.ts'
import { type VllmMetricName, vllmMetricHelp } from './vllm-metric-help.ts'

/** `FINISH_REASON_STRINGS` of `vllm/v1/engine/__init__.py`, in enum order. */
export const vllmFinishedReasons = ['stop', 'length', 'abort', 'error', 'repetition'] as const
export type VllmFinishedReason = (typeof vllmFinishedReasons)[number]

export interface VllmMetricsOptions {
  /** The served model name, the `model_name` label. */
  modelName: string
  /** The data-parallel engine index, the `engine` label. */
  engine?: string
  /** Upper end of the 1-2-5 buckets of the token-count histograms. */
  maxModelLen: number
  cacheConfig: VllmCacheConfig
  /** When set, LoRA is enabled and `vllm:lora_requests_info` is exposed. */
  lora?: { maxLoras: number }
  /** Wall-clock seconds (Python's `time.time()`): `_created` samples and the LoRA gauge. */
  now: () => number
}

/**
 * One engine step as vLLM's `IterationStats` counts it. A request's whole prompt counts
 * in the step that gives its first token (chunked prefill included), and
 * `vllm:iteration_tokens_total` observes promptTokens + generationTokens of the step.
 */
export interface VllmStepStats {
  promptTokens: number
  generationTokens: number
  /** Seconds from arrival to the first token, one per request that got it this step. */
  timesToFirstToken?: readonly number[]
  /** Seconds since the request's previous token, one per later token of this step. */
  interTokenLatencies?: readonly number[]
}

/** A finished request, as vLLM's `FinishedRequestStats` (all times in seconds). */
export interface VllmFinishedRequest {
  finishedReason: VllmFinishedReason
  promptTokens: number
  generationTokens: number
  /** The request's max_tokens; observed only when set and non-zero, as vLLM does. */
  maxTokens?: number | null
  /** The n sampling parameter (1 unless the request asked for parallel samples). */
  n?: number
  /** Arrival to finish. */
  e2eLatency: number
  /** Queued to first scheduled. */
  queueTime: number
  /** First scheduled to first token. */
  prefillTime: number
  /** First token to last token. */
  decodeTime: number
  /** First scheduled to last token. */
  inferenceTime: number
}

export interface VllmMetrics {
  setState(state: { running: number; waiting: number; kvCacheUsage: number }): void
  addPrefixCache(stats: { queries: number; hits: number }): void
  /** The KV connector's (cross-instance) prefix cache. */
  addExternalPrefixCache(stats: { queries: number; hits: number }): void
  addPreemptions(count: number): void
  recordStep(step: VllmStepStats): void
  recordRequestFinished(request: VllmFinishedRequest): void
  /** 0 awake, 1 asleep with weights offloaded, 2 asleep with everything discarded. */
  setSleepState(level: 0 | 1 | 2): void
  /** Adapter names of running and waiting requests; sets the LoRA gauge to now(). */
  setLoraState(state: { running: readonly string[]; waiting: readonly string[] }): void
  /** The `/metrics` body; serve it with `prometheusTextContentType`. */
  render(): string
}

/**
 * The Prometheus exposition of one vLLM V1 engine, as `PrometheusStatLogger` registers it:
 * the same names, types, HELP text, labels (`model_name`, `engine`), buckets and family
 * order, every series present (at zero) from the start, `vllm:cache_config_info` last.
 * Omitted: the Python process and HTTP metrics of the same endpoint, and the metrics vLLM
 * only registers when enabled (hidden deprecated names, speculative decoding, KV connector,
 * KV block residency, NaN-logit requests).
 */
export function createVllmMetrics({
  modelName,
  engine = '0',
  maxModelLen,
  cacheConfig,
  lora,
  now,
}: VllmMetricsOptions): VllmMetrics {
  if (!Number.isSafeInteger(maxModelLen) || maxModelLen < 1) {
    throw new KinfError('invalid_config', 'maxModelLen must be a whole number >= 1')
  }
  const registry = createPrometheusRegistry({ now })
  const labels = { model_name: modelName, engine }
  const gauge = (name: VllmMetricName) => registry.gauge(name, vllmMetricHelp[name])
  const counter = (name: VllmMetricName) => registry.counter(name, vllmMetricHelp[name])
  const histogram = (name: VllmMetricName, buckets: readonly number[]) =>
    registry.histogram(name, vllmMetricHelp[name], buckets).labels(labels)
  const tokens = build125Buckets(maxModelLen)
  const { perOutputToken, requestLatency } = vllmHistogramBuckets

  // In registration order, which is the order on /metrics.
  const running = gauge('vllm:num_requests_running').labels(labels)
  const waiting = gauge('vllm:num_requests_waiting').labels(labels)
  const sleepFamily = gauge('vllm:engine_sleep_state')
  const sleep = (['awake', 'weights_offloaded', 'discard_all'] as const).map((state) =>
    sleepFamily.labels({ ...labels, sleep_state: state }),
  )
  const kvCacheUsage = gauge('vllm:kv_cache_usage_perc').labels(labels)
  const prefixQueries = counter('vllm:prefix_cache_queries').labels(labels)
  const prefixHits = counter('vllm:prefix_cache_hits').labels(labels)
  const externalQueries = counter('vllm:external_prefix_cache_queries').labels(labels)
  const externalHits = counter('vllm:external_prefix_cache_hits').labels(labels)
  counter('vllm:mm_cache_queries').labels(labels)
  counter('vllm:mm_cache_hits').labels(labels)
  const preemptions = counter('vllm:num_preemptions').labels(labels)
  const promptTokens = counter('vllm:prompt_tokens').labels(labels)
  const generationTokens = counter('vllm:generation_tokens').labels(labels)
  const successFamily = counter('vllm:request_success')
  const success = new Map<string, CounterChild>(
    vllmFinishedReasons.map((reason) => [
      reason,
      successFamily.labels({ ...labels, finished_reason: reason }),
    ]),
  )
  const requestPromptTokens = histogram('vllm:request_prompt_tokens', tokens)
  const requestGenerationTokens = histogram('vllm:request_generation_tokens', tokens)
  const iterationTokens = histogram(
    'vllm:iteration_tokens_total',
    vllmHistogramBuckets.iterationTokens,
  )
  const maxGenerationTokens = histogram('vllm:request_max_num_generation_tokens', tokens)
  const paramsN = histogram('vllm:request_params_n', vllmHistogramBuckets.requestParamsN)
  const paramsMaxTokens = histogram('vllm:request_params_max_tokens', tokens)
  const timeToFirstToken = histogram(
    'vllm:time_to_first_token_seconds',
    vllmHistogramBuckets.timeToFirstToken,
  )
  const interTokenLatency = histogram('vllm:inter_token_latency_seconds', perOutputToken)
  const timePerOutputToken = histogram('vllm:request_time_per_output_token_seconds', perOutputToken)
  const e2e = histogram('vllm:e2e_request_latency_seconds', requestLatency)
  const queueTime = histogram('vllm:request_queue_time_seconds', requestLatency)
  const inferenceTime = histogram('vllm:request_inference_time_seconds', requestLatency)
  const prefillTime = histogram('vllm:request_prefill_time_seconds', requestLatency)
  const decodeTime = histogram('vllm:request_decode_time_seconds', requestLatency)
  const loraFamily = lora && gauge('vllm:lora_requests_info')
  gauge('vllm:cache_config_info').labels(cacheConfigLabels(cacheConfig, engine)).set(1)

  const setSleepState = (level: 0 | 1 | 2) => {
    sleep[0]?.set(level === 0 ? 1 : 0)
    sleep[1]?.set(level === 1 ? 1 : 0)
    sleep[2]?.set(level === 2 ? 1 : 0)
  }
  setSleepState(0)

  return {
    setState(state) {
      running.set(state.running)
      waiting.set(state.waiting)
      kvCacheUsage.set(state.kvCacheUsage)
    },
    addPrefixCache({ queries, hits }) {
      prefixQueries.inc(queries)
      prefixHits.inc(hits)
    },
    addExternalPrefixCache({ queries, hits }) {
      externalQueries.inc(queries)
      externalHits.inc(hits)
    },
    addPreemptions(count) {
      preemptions.inc(count)
    },
    recordStep(step) {
      promptTokens.inc(step.promptTokens)
      generationTokens.inc(step.generationTokens)
      iterationTokens.observe(step.promptTokens + step.generationTokens)
      observeAll(timeToFirstToken, step.timesToFirstToken)
      observeAll(interTokenLatency, step.interTokenLatencies)
    },
    recordRequestFinished(request) {
      const reason = success.get(request.finishedReason)
      if (reason === undefined) {
        throw new KinfError('internal', `unknown finished_reason "${request.finishedReason}"`)
      }
      maxGenerationTokens.observe(request.generationTokens)
      paramsN.observe(request.n ?? 1)
      reason.inc()
      e2e.observe(request.e2eLatency)
      queueTime.observe(request.queueTime)
      prefillTime.observe(request.prefillTime)
      inferenceTime.observe(request.inferenceTime)
      decodeTime.observe(request.decodeTime)
      requestPromptTokens.observe(request.promptTokens)
      requestGenerationTokens.observe(request.generationTokens)
      // vLLM's mean TPOT leaves out the first token, which the prefill produced.
      timePerOutputToken.observe(
        request.generationTokens > 1 ? request.decodeTime / (request.generationTokens - 1) : 0,
      )
      if (request.maxTokens) paramsMaxTokens.observe(request.maxTokens)
    },
    setSleepState,
    setLoraState(state) {
      loraFamily
        ?.labels({
          max_lora: String(lora?.maxLoras),
          running_lora_adapters: state.running.join(','),
          waiting_lora_adapters: state.waiting.join(','),
        })
        .set(now())
    },
    render: () => registry.render(),
  }
}

function observeAll(histogram: HistogramChild, values: readonly number[] | undefined): void {
  for (const value of values ?? []) histogram.observe(value)
}
