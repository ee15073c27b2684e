import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import {
  type CounterChild,
  createPrometheusRegistry,
  type HistogramChild,
} from '../../../../shared/metrics/create-prometheus-registry.ts'
import { cacheConfigLabels, type VllmCacheConfig } from './cache-config-labels.ts'
import { registerVllmFamilies, type VllmFamilies } from './vllm-metric-families.ts'

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

/** One engine's series: what its scheduler and output processor record. */
export interface VllmEngineMetrics {
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
}

export interface VllmMetrics extends VllmEngineMetrics {
  /** The `/metrics` body; serve it with `prometheusTextContentType`. */
  render(): string
}

/** The metrics of a server with several engines (`--data-parallel-size`), one /metrics. */
export interface DataParallelVllmMetrics {
  /** Engine r's series, `engine="r"`. */
  readonly engines: readonly VllmEngineMetrics[]
  render(): string
}

export interface DataParallelVllmMetricsOptions extends Omit<VllmMetricsOptions, 'engine'> {
  /** How many engines; engine indexes 0 to engines − 1. */
  engines: number
}

/**
 * The Prometheus exposition of one vLLM V1 engine, as `PrometheusStatLogger` registers it:
 * the same names, types, HELP text, labels (`model_name`, `engine`), buckets and family
 * order, every series present (at zero) from the start, `vllm:cache_config_info` last.
 * Omitted: the Python process and HTTP metrics of the same endpoint, and the metrics vLLM
 * only registers when enabled (hidden deprecated names, speculative decoding, KV connector,
 * KV block residency, NaN-logit requests).
 */
export function createVllmMetrics({ engine = '0', ...options }: VllmMetricsOptions): VllmMetrics {
  const { engines, render } = createMetrics(options, [engine])
  return { ...(engines[0] as VllmEngineMetrics), render }
}

/**
 * The same for a data-parallel server: one family per metric, one series per engine in
 * each (`make_per_engine`), and a `vllm:cache_config_info` per engine. vLLM registers no
 * LoRA gauge with several engines ("LoRA in DP mode is not supported yet", loggers.py).
 */
export function createDataParallelVllmMetrics({
  engines,
  ...options
}: DataParallelVllmMetricsOptions): DataParallelVllmMetrics {
  if (!Number.isSafeInteger(engines) || engines < 1)
    throw new KinfError('invalid_config', 'engines must be a whole number >= 1')
  if (engines > 1 && options.lora)
    throw new KinfError('invalid_config', 'vLLM has no LoRA metrics with several engines')
  return createMetrics(
    options,
    Array.from({ length: engines }, (_, index) => String(index)),
  )
}

function createMetrics(
  { modelName, maxModelLen, cacheConfig, lora, now }: Omit<VllmMetricsOptions, 'engine'>,
  engines: readonly string[],
): DataParallelVllmMetrics {
  if (!Number.isSafeInteger(maxModelLen) || maxModelLen < 1) {
    throw new KinfError('invalid_config', 'maxModelLen must be a whole number >= 1')
  }
  const registry = createPrometheusRegistry({ now })
  const families = registerVllmFamilies(registry, maxModelLen, lora !== undefined)
  // Every engine's series of a family before the next family's, as make_per_engine does.
  const series = engines.map((engine) => engineSeries(families, { model_name: modelName, engine }))
  for (const engine of engines)
    families.cacheConfigInfo.labels(cacheConfigLabels(cacheConfig, engine)).set(1)
  return {
    engines: series.map((one) => one.bind({ lora, now })),
    render: () => registry.render(),
  }
}

/** One engine's children of every family, and what records into them. */
function engineSeries(families: VllmFamilies, labels: { model_name: string; engine: string }) {
  const child = <C>(family: { labels(values: typeof labels): C }) => family.labels(labels)
  const running = child(families.running)
  const waiting = child(families.waiting)
  const sleep = (['awake', 'weights_offloaded', 'discard_all'] as const).map((state) =>
    families.sleep.labels({ ...labels, sleep_state: state }),
  )
  const kvCacheUsage = child(families.kvCacheUsage)
  const prefixQueries = child(families.prefixQueries)
  const prefixHits = child(families.prefixHits)
  const externalQueries = child(families.externalQueries)
  const externalHits = child(families.externalHits)
  child(families.mmQueries)
  child(families.mmHits)
  const preemptions = child(families.preemptions)
  const promptTokens = child(families.promptTokens)
  const generationTokens = child(families.generationTokens)
  const success = new Map<string, CounterChild>(
    vllmFinishedReasons.map((reason) => [
      reason,
      families.success.labels({ ...labels, finished_reason: reason }),
    ]),
  )
  const requestPromptTokens = child(families.requestPromptTokens)
  const requestGenerationTokens = child(families.requestGenerationTokens)
  const iterationTokens = child(families.iterationTokens)
  const maxGenerationTokens = child(families.maxGenerationTokens)
  const paramsN = child(families.paramsN)
  const paramsMaxTokens = child(families.paramsMaxTokens)
  const timeToFirstToken = child(families.timeToFirstToken)
  const interTokenLatency = child(families.interTokenLatency)
  const timePerOutputToken = child(families.timePerOutputToken)
  const e2e = child(families.e2e)
  const queueTime = child(families.queueTime)
  const inferenceTime = child(families.inferenceTime)
  const prefillTime = child(families.prefillTime)
  const decodeTime = child(families.decodeTime)

  const setSleepState = (level: 0 | 1 | 2) => {
    sleep[0]?.set(level === 0 ? 1 : 0)
    sleep[1]?.set(level === 1 ? 1 : 0)
    sleep[2]?.set(level === 2 ? 1 : 0)
  }
  setSleepState(0)

  const bind = ({ lora, now }: Pick<VllmMetricsOptions, 'lora' | 'now'>): VllmEngineMetrics => ({
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
      families.lora
        ?.labels({
          max_lora: String(lora?.maxLoras),
          running_lora_adapters: state.running.join(','),
          waiting_lora_adapters: state.waiting.join(','),
        })
        .set(now())
    },
  })
  return { bind }
}

function observeAll(histogram: HistogramChild, values: readonly number[] | undefined): void {
  for (const value of values ?? []) histogram.observe(value)
}
