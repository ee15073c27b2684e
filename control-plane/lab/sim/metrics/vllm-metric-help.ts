/**
 * The metrics of vLLM V1's `PrometheusStatLogger` (`vllm/v1/metrics/loggers.py`), by the
 * name given to prometheus_client (counters without `_total`), with their HELP text, in
 * registration order: the order of the families on `/metrics`.
 */
export const vllmMetricHelp = {
  'vllm:num_requests_running': 'Number of requests in model execution batches.',
  'vllm:num_requests_waiting': 'Number of requests waiting to be processed.',
  'vllm:engine_sleep_state':
    'Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; ' +
    'weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.',
  'vllm:kv_cache_usage_perc': 'KV-cache usage. 1 means 100 percent usage.',
  'vllm:prefix_cache_queries': 'Prefix cache queries, in terms of number of queried tokens.',
  'vllm:prefix_cache_hits': 'Prefix cache hits, in terms of number of cached tokens.',
  'vllm:external_prefix_cache_queries':
    'External prefix cache queries from KV connector cross-instance cache sharing, ' +
    'in terms of number of queried tokens.',
  'vllm:external_prefix_cache_hits':
    'External prefix cache hits from KV connector cross-instance cache sharing, ' +
    'in terms of number of cached tokens.',
  'vllm:mm_cache_queries': 'Multi-modal cache queries, in terms of number of queried items.',
  'vllm:mm_cache_hits': 'Multi-modal cache hits, in terms of number of cached items.',
  'vllm:num_preemptions': 'Cumulative number of preemption from the engine.',
  'vllm:prompt_tokens': 'Number of prefill tokens processed.',
  'vllm:generation_tokens': 'Number of generation tokens processed.',
  'vllm:request_success': 'Count of successfully processed requests.',
  'vllm:request_prompt_tokens': 'Number of prefill tokens processed.',
  'vllm:request_generation_tokens': 'Number of generation tokens processed.',
  'vllm:iteration_tokens_total': 'Histogram of number of tokens per engine_step.',
  'vllm:request_max_num_generation_tokens':
    'Histogram of maximum number of requested generation tokens.',
  'vllm:request_params_n': 'Histogram of the n request parameter.',
  'vllm:request_params_max_tokens': 'Histogram of the max_tokens request parameter.',
  'vllm:time_to_first_token_seconds': 'Histogram of time to first token in seconds.',
  'vllm:inter_token_latency_seconds': 'Histogram of inter-token latency in seconds.',
  'vllm:request_time_per_output_token_seconds':
    'Histogram of time_per_output_token_seconds per request.',
  'vllm:e2e_request_latency_seconds': 'Histogram of e2e request latency in seconds.',
  'vllm:request_queue_time_seconds': 'Histogram of time spent in WAITING phase for request.',
  'vllm:request_inference_time_seconds': 'Histogram of time spent in RUNNING phase for request.',
  'vllm:request_prefill_time_seconds': 'Histogram of time spent in PREFILL phase for request.',
  'vllm:request_decode_time_seconds': 'Histogram of time spent in DECODE phase for request.',
  'vllm:lora_requests_info': 'Running stats on lora requests.',
  'vllm:cache_config_info': 'Information of the LLMEngine CacheConfig',
} as const

export type VllmMetricName = keyof typeof vllmMetricHelp
