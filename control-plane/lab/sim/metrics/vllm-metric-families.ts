import type { PrometheusRegistry } from '../../../../shared/metrics/create-prometheus-registry.ts'
import { build125Buckets, vllmHistogramBuckets } from './vllm-histogram-buckets.ts'
import { type VllmMetricName, vllmMetricHelp } from './vllm-metric-help.ts'

/**
 * The families of vLLM V1's `PrometheusStatLogger`, registered once in its order; each
 * engine (data-parallel rank) then takes its own series of them (`make_per_engine` in
 * `vllm/v1/metrics/loggers.py`), told apart by the `engine` label.
 */
export function registerVllmFamilies(
  registry: PrometheusRegistry,
  maxModelLen: number,
  withLora: boolean,
) {
  const gauge = (name: VllmMetricName) => registry.gauge(name, vllmMetricHelp[name])
  const counter = (name: VllmMetricName) => registry.counter(name, vllmMetricHelp[name])
  const histogram = (name: VllmMetricName, buckets: readonly number[]) =>
    registry.histogram(name, vllmMetricHelp[name], buckets)
  const tokens = build125Buckets(maxModelLen)
  const { perOutputToken, requestLatency } = vllmHistogramBuckets

  // In registration order, which is the order on /metrics.
  return {
    running: gauge('vllm:num_requests_running'),
    waiting: gauge('vllm:num_requests_waiting'),
    sleep: gauge('vllm:engine_sleep_state'),
    kvCacheUsage: gauge('vllm:kv_cache_usage_perc'),
    prefixQueries: counter('vllm:prefix_cache_queries'),
    prefixHits: counter('vllm:prefix_cache_hits'),
    externalQueries: counter('vllm:external_prefix_cache_queries'),
    externalHits: counter('vllm:external_prefix_cache_hits'),
    mmQueries: counter('vllm:mm_cache_queries'),
    mmHits: counter('vllm:mm_cache_hits'),
    preemptions: counter('vllm:num_preemptions'),
    promptTokens: counter('vllm:prompt_tokens'),
    generationTokens: counter('vllm:generation_tokens'),
    success: counter('vllm:request_success'),
    requestPromptTokens: histogram('vllm:request_prompt_tokens', tokens),
    requestGenerationTokens: histogram('vllm:request_generation_tokens', tokens),
    iterationTokens: histogram('vllm:iteration_tokens_total', vllmHistogramBuckets.iterationTokens),
    maxGenerationTokens: histogram('vllm:request_max_num_generation_tokens', tokens),
    paramsN: histogram('vllm:request_params_n', vllmHistogramBuckets.requestParamsN),
    paramsMaxTokens: histogram('vllm:request_params_max_tokens', tokens),
    timeToFirstToken: histogram(
      'vllm:time_to_first_token_seconds',
      vllmHistogramBuckets.timeToFirstToken,
    ),
    interTokenLatency: histogram('vllm:inter_token_latency_seconds', perOutputToken),
    timePerOutputToken: histogram('vllm:request_time_per_output_token_seconds', perOutputToken),
    e2e: histogram('vllm:e2e_request_latency_seconds', requestLatency),
    queueTime: histogram('vllm:request_queue_time_seconds', requestLatency),
    inferenceTime: histogram('vllm:request_inference_time_seconds', requestLatency),
    prefillTime: histogram('vllm:request_prefill_time_seconds', requestLatency),
    decodeTime: histogram('vllm:request_decode_time_seconds', requestLatency),
    lora: withLora ? gauge('vllm:lora_requests_info') : null,
    cacheConfigInfo: gauge('vllm:cache_config_info'),
  }
}

export type VllmFamilies = ReturnType<typeof registerVllmFamilies>
