import { describe, expect, it } from 'vitest'
import {
  createDataParallelVllmMetrics,
  createVllmMetrics,
  type VllmMetricsOptions,
} from '../../../../../control-plane/lab/sim/metrics/create-vllm-metrics.ts'
import { vllmHistogramBuckets } from '../../../../../control-plane/lab/sim/metrics/vllm-histogram-buckets.ts'
import { extractVllmLoadSignals } from '../../../../../control-plane/metrics/extract-vllm-load-signals.ts'
import { parsePrometheusText } from '../../../../../control-plane/metrics/parse-prometheus-text.ts'

const created = 1786910601.1177013
const base: VllmMetricsOptions = {
  modelName: 'Qwen/Qwen3-8B',
  maxModelLen: 100,
  cacheConfig: { blockSize: 16, numGpuBlocks: 1000 },
  now: () => created,
}
const id = 'engine="0",model_name="Qwen/Qwen3-8B"'

/** A bucket bound as Prometheus writes it. */
const le = (text: string | undefined) => (text === '+Inf' ? Number.POSITIVE_INFINITY : Number(text))

/** The lines of one family (by exposed name) and of its `_created` family. */
function family(text: string, exposed: string): string {
  const created = `# HELP ${exposed.replace(/_total$/, '')}_created `
  const lines = text.split('\n')
  const start = lines.findIndex((line) => line.startsWith(`# HELP ${exposed} `))
  const end = lines.findIndex(
    (line, index) => index > start && line.startsWith('# HELP ') && !line.startsWith(created),
  )
  return lines.slice(start, end === -1 ? undefined : end).join('\n')
}

describe('createVllmMetrics', () => {
  it('registers the families of vLLM V1 in its order, cache_config_info last', () => {
    const text = createVllmMetrics({ ...base, lora: { maxLoras: 4 } }).render()
    const families = text
      .split('\n')
      .filter((line) => line.startsWith('# TYPE ') && !line.includes('_created '))
      .map((line) => line.slice('# TYPE '.length))
    expect(families).toEqual([
      'vllm:num_requests_running gauge',
      'vllm:num_requests_waiting gauge',
      'vllm:engine_sleep_state gauge',
      'vllm:kv_cache_usage_perc gauge',
      'vllm:prefix_cache_queries_total counter',
      'vllm:prefix_cache_hits_total counter',
      'vllm:external_prefix_cache_queries_total counter',
      'vllm:external_prefix_cache_hits_total counter',
      'vllm:mm_cache_queries_total counter',
      'vllm:mm_cache_hits_total counter',
      'vllm:num_preemptions_total counter',
      'vllm:prompt_tokens_total counter',
      'vllm:generation_tokens_total counter',
      'vllm:request_success_total counter',
      'vllm:request_prompt_tokens histogram',
      'vllm:request_generation_tokens histogram',
      'vllm:iteration_tokens_total histogram',
      'vllm:request_max_num_generation_tokens histogram',
      'vllm:request_params_n histogram',
      'vllm:request_params_max_tokens histogram',
      'vllm:time_to_first_token_seconds histogram',
      'vllm:inter_token_latency_seconds histogram',
      'vllm:request_time_per_output_token_seconds histogram',
      'vllm:e2e_request_latency_seconds histogram',
      'vllm:request_queue_time_seconds histogram',
      'vllm:request_inference_time_seconds histogram',
      'vllm:request_prefill_time_seconds histogram',
      'vllm:request_decode_time_seconds histogram',
      'vllm:lora_requests_info gauge',
      'vllm:cache_config_info gauge',
    ])
    expect(createVllmMetrics(base).render()).not.toContain('lora')
  })

  it('writes gauges, counters with _created, and cumulative 1-2-5 buckets exactly', () => {
    const metrics = createVllmMetrics(base)
    metrics.setState({ running: 3, waiting: 1, kvCacheUsage: 0.25 })
    metrics.addPrefixCache({ queries: 4096, hits: 1024 })
    metrics.recordStep({ promptTokens: 30, generationTokens: 2, timesToFirstToken: [0.05] })
    const finished = { e2eLatency: 1, queueTime: 0.1, prefillTime: 0.2, decodeTime: 0.7 }
    metrics.recordRequestFinished({
      ...finished,
      finishedReason: 'length',
      promptTokens: 30,
      generationTokens: 8,
      maxTokens: 8,
      inferenceTime: 0.9,
    })
    metrics.recordRequestFinished({
      ...finished,
      finishedReason: 'stop',
      promptTokens: 7,
      generationTokens: 1,
      inferenceTime: 0.9,
    })
    const text = metrics.render()

    expect(family(text, 'vllm:kv_cache_usage_perc')).toBe(
      [
        '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.',
        '# TYPE vllm:kv_cache_usage_perc gauge',
        `vllm:kv_cache_usage_perc{${id}} 0.25`,
      ].join('\n'),
    )
    expect(family(text, 'vllm:prefix_cache_queries_total')).toBe(
      [
        '# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.',
        '# TYPE vllm:prefix_cache_queries_total counter',
        `vllm:prefix_cache_queries_total{${id}} 4096.0`,
        '# HELP vllm:prefix_cache_queries_created Prefix cache queries, in terms of number of queried tokens.',
        '# TYPE vllm:prefix_cache_queries_created gauge',
        `vllm:prefix_cache_queries_created{${id}} 1.7869106011177013e+09`,
      ].join('\n'),
    )
    const success = (reason: string, value: string) =>
      `vllm:request_success_total{engine="0",finished_reason="${reason}",model_name="Qwen/Qwen3-8B"} ${value}`
    expect(family(text, 'vllm:request_success_total').split('\n').slice(0, 7)).toEqual([
      '# HELP vllm:request_success_total Count of successfully processed requests.',
      '# TYPE vllm:request_success_total counter',
      success('stop', '1.0'),
      success('length', '1.0'),
      success('abort', '0.0'),
      success('error', '0.0'),
      success('repetition', '0.0'),
    ])
    const bucket = (le: string, value: string) =>
      `vllm:request_prompt_tokens_bucket{engine="0",le="${le}",model_name="Qwen/Qwen3-8B"} ${value}`
    expect(family(text, 'vllm:request_prompt_tokens')).toBe(
      [
        '# HELP vllm:request_prompt_tokens Number of prefill tokens processed.',
        '# TYPE vllm:request_prompt_tokens histogram',
        bucket('1.0', '0.0'),
        bucket('2.0', '0.0'),
        bucket('5.0', '0.0'),
        bucket('10.0', '1.0'),
        bucket('20.0', '1.0'),
        bucket('50.0', '2.0'),
        bucket('100.0', '2.0'),
        bucket('+Inf', '2.0'),
        `vllm:request_prompt_tokens_count{${id}} 2.0`,
        `vllm:request_prompt_tokens_sum{${id}} 37.0`,
        '# HELP vllm:request_prompt_tokens_created Number of prefill tokens processed.',
        '# TYPE vllm:request_prompt_tokens_created gauge',
        `vllm:request_prompt_tokens_created{${id}} 1.7869106011177013e+09`,
      ].join('\n'),
    )
    // Mean time per output token leaves out the prefill's token: 0.7 / 7, and 0 for one token.
    expect(text).toContain(
      `vllm:request_time_per_output_token_seconds_sum{${id}} 0.09999999999999999\n`,
    )
    expect(text).toContain(`vllm:request_params_max_tokens_count{${id}} 1.0\n`)
    expect(text).toContain(`vllm:iteration_tokens_total_sum{${id}} 32.0\n`)
    expect(text).toContain(
      'vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",' +
        'engine="0",gpu_memory_utilization="0.92",is_attention_free="False",' +
        'kv_cache_memory_bytes="None",kv_cache_size_tokens="16000",num_cpu_blocks="None",' +
        'num_gpu_blocks="1000",num_gpu_blocks_override="None",prefix_caching_hash_algo="sha256",' +
        'sliding_window="None"} 1.0\n',
    )
  })

  it('escapes the model name and goes to exponent form past six digits, as vLLM does', () => {
    const metrics = createVllmMetrics({
      ...base,
      modelName: 'org/"quoted"\\model\nv2',
      engine: '3',
      maxModelLen: 2_000_000,
    })
    metrics.recordStep({ promptTokens: 1_500_000, generationTokens: 0 })
    const text = metrics.render()
    const labels = 'engine="3",model_name="org/\\"quoted\\"\\\\model\\nv2"'
    expect(text).toContain(`vllm:prompt_tokens_total{${labels}} 1.5e+06\n`)
    expect(text).toContain(
      'vllm:request_prompt_tokens_bucket{engine="3",le="2e+06",model_name="org/\\"quoted\\"\\\\model\\nv2"} 0.0\n',
    )
    expect(text).toContain(`vllm:iteration_tokens_total_bucket{engine="3",le="+Inf",model_name=`)
    const parsed = parsePrometheusText(text)
    expect(parsed.errorCount).toBe(0)
    expect(parsed.samples.find((s) => s.name === 'vllm:prompt_tokens_total')?.labels).toEqual({
      engine: '3',
      model_name: 'org/"quoted"\\model\nv2',
    })
  })

  it('round-trips through the parser: every recorded value reads back', () => {
    let random = 42
    const next = () => {
      random = (random * 1103515245 + 12345) % 2 ** 31
      return random / 2 ** 31
    }
    const metrics = createVllmMetrics({ ...base, maxModelLen: 32768 })
    const itls: number[] = []
    const e2es: number[] = []
    let prompt = 0
    let generation = 0
    const reasons = { stop: 0, length: 0, abort: 0, error: 0, repetition: 0 }
    for (let step = 0; step < 500; step++) {
      const stepItls = Array.from({ length: Math.floor(next() * 8) }, () => next() * 0.2)
      const stepPrompt = next() < 0.2 ? Math.floor(next() * 4000) : 0
      itls.push(...stepItls)
      prompt += stepPrompt
      generation += stepItls.length
      metrics.recordStep({
        promptTokens: stepPrompt,
        generationTokens: stepItls.length,
        interTokenLatencies: stepItls,
      })
      if (step % 7 === 0) {
        const reason = (['stop', 'length', 'abort'] as const)[step % 3] ?? 'stop'
        reasons[reason] += 1
        const e2e = next() * 100
        e2es.push(e2e)
        metrics.recordRequestFinished({
          finishedReason: reason,
          promptTokens: 10,
          generationTokens: 20,
          e2eLatency: e2e,
          queueTime: 0,
          prefillTime: 0,
          decodeTime: 0,
          inferenceTime: 0,
        })
      }
    }
    metrics.setState({ running: 12, waiting: 5, kvCacheUsage: 0.8125 })
    metrics.addPrefixCache({ queries: 123456, hits: 65432 })
    metrics.addPreemptions(3)

    const { samples, errors, types } = parsePrometheusText(metrics.render())
    expect(errors).toEqual([])
    const value = (name: string, extra: Record<string, string> = {}) =>
      samples.find(
        (s) =>
          s.name === name &&
          Object.entries(extra).every(([k, v]) => s.labels[k] === v) &&
          Object.keys(s.labels).length === 2 + Object.keys(extra).length,
      )?.value
    expect(value('vllm:prompt_tokens_total')).toBe(prompt)
    expect(value('vllm:generation_tokens_total')).toBe(generation)
    expect(value('vllm:num_preemptions_total')).toBe(3)
    for (const [reason, count] of Object.entries(reasons)) {
      expect(value('vllm:request_success_total', { finished_reason: reason })).toBe(count)
    }
    const itlBuckets = samples.filter((s) => s.name === 'vllm:inter_token_latency_seconds_bucket')
    expect(itlBuckets.map((s) => le(s.labels.le))).toEqual([
      ...vllmHistogramBuckets.perOutputToken,
      Number.POSITIVE_INFINITY,
    ])
    for (const { labels, value: count } of itlBuckets) {
      expect(count).toBe(itls.filter((itl) => itl <= le(labels.le)).length)
    }
    expect(value('vllm:inter_token_latency_seconds_count')).toBe(itls.length)
    expect(value('vllm:inter_token_latency_seconds_sum')).toBe(itls.reduce((a, b) => a + b, 0))
    expect(value('vllm:e2e_request_latency_seconds_bucket', { le: '+Inf' })).toBe(e2es.length)
    expect(value('vllm:e2e_request_latency_seconds_bucket', { le: '60.0' })).toBe(
      e2es.filter((e2e) => e2e <= 60).length,
    )
    expect(value('vllm:prompt_tokens_created')).toBe(created)
    expect(types.get('vllm:prompt_tokens_total')).toBe('counter')
    expect(types.get('vllm:prompt_tokens_created')).toBe('gauge')
    expect(types.get('vllm:iteration_tokens_total')).toBe('histogram')
    expect(extractVllmLoadSignals(samples, base.modelName)).toEqual({
      running: 12,
      waiting: 5,
      kvCacheUsage: 0.8125,
      prefixCacheQueries: 123456,
      prefixCacheHits: 65432,
      numGpuBlocks: 1000,
      blockSize: 16,
      engines: ['0'],
      deprecatedNames: [],
    })
  })

  it('keeps one LoRA series per adapter combination, each at the time it was last set', () => {
    let clock = 1000
    const metrics = createVllmMetrics({ ...base, lora: { maxLoras: 2 }, now: () => clock })
    expect(metrics.render()).toContain(
      '# TYPE vllm:lora_requests_info gauge\n# HELP vllm:cache_config_info',
    )
    metrics.setLoraState({ running: ['sql', 'chat'], waiting: [] })
    clock = 1001.5
    metrics.setLoraState({ running: ['sql'], waiting: ['chat'] })
    clock = 1002
    metrics.setLoraState({ running: ['sql', 'chat'], waiting: [] })
    expect(family(metrics.render(), 'vllm:lora_requests_info')).toBe(
      [
        '# HELP vllm:lora_requests_info Running stats on lora requests.',
        '# TYPE vllm:lora_requests_info gauge',
        'vllm:lora_requests_info{max_lora="2",running_lora_adapters="sql,chat",waiting_lora_adapters=""} 1002.0',
        'vllm:lora_requests_info{max_lora="2",running_lora_adapters="sql",waiting_lora_adapters="chat"} 1001.5',
      ].join('\n'),
    )
  })

  it('reports the sleep level on the three sleep_state series', () => {
    const metrics = createVllmMetrics(base)
    const states = () =>
      [...metrics.render().matchAll(/engine_sleep_state\{.*sleep_state="(\w+)"\} (\S+)/g)].map(
        ([, state, value]) => `${state}=${value}`,
      )
    expect(states()).toEqual(['awake=1.0', 'weights_offloaded=0.0', 'discard_all=0.0'])
    metrics.setSleepState(2)
    expect(states()).toEqual(['awake=0.0', 'weights_offloaded=0.0', 'discard_all=1.0'])
  })

  it('refuses configurations and observations vLLM would not produce', () => {
    expect(() => createVllmMetrics({ ...base, maxModelLen: 0 })).toThrow(/maxModelLen/)
    expect(() =>
      createVllmMetrics({ ...base, cacheConfig: { blockSize: 16.5, numGpuBlocks: 1 } }),
    ).toThrow(/blockSize/)
    const metrics = createVllmMetrics(base)
    expect(() => metrics.addPreemptions(-1)).toThrow(/only go up/)
    expect(() =>
      metrics.recordStep({ promptTokens: 1, generationTokens: 1, timesToFirstToken: [Number.NaN] }),
    ).toThrow(/NaN/)
    expect(() =>
      metrics.recordRequestFinished({
        finishedReason: 'timeout' as 'stop',
        promptTokens: 1,
        generationTokens: 1,
        e2eLatency: 0,
        queueTime: 0,
        prefillTime: 0,
        decodeTime: 0,
        inferenceTime: 0,
      }),
    ).toThrow(/finished_reason/)
  })
})

describe('createDataParallelVllmMetrics', () => {
  it('gives each engine its series of every family, labelled engine="r", as make_per_engine does', () => {
    const metrics = createDataParallelVllmMetrics({ ...base, engines: 2 })
    metrics.engines[0]?.setState({ running: 3, waiting: 1, kvCacheUsage: 0.5 })
    metrics.engines[1]?.setState({ running: 1, waiting: 0, kvCacheUsage: 0.125 })
    metrics.engines[1]?.addPrefixCache({ queries: 64, hits: 32 })
    const text = metrics.render()
    expect(family(text, 'vllm:num_requests_running')).toBe(
      [
        '# HELP vllm:num_requests_running Number of requests in model execution batches.',
        '# TYPE vllm:num_requests_running gauge',
        'vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} 3.0',
        'vllm:num_requests_running{engine="1",model_name="Qwen/Qwen3-8B"} 1.0',
      ].join('\n'),
    )
    // Each family's HELP and TYPE once, both engines' series under it.
    expect(text.match(/# TYPE vllm:kv_cache_usage_perc gauge/g)).toHaveLength(1)
    expect(text.match(/^vllm:cache_config_info\{/gm)).toHaveLength(2)
    expect(text).toContain('engine="1",gpu_memory_utilization="0.92"')
    const { samples, errorCount } = parsePrometheusText(text)
    expect(errorCount).toBe(0)
    const rank = (engine: string) => extractVllmLoadSignals(samples, 'Qwen/Qwen3-8B', { engine })
    expect(rank('0')).toMatchObject({
      running: 3,
      waiting: 1,
      kvCacheUsage: 0.5,
      prefixCacheQueries: 0,
      numGpuBlocks: 1000,
      engines: ['0'],
    })
    expect(rank('1')).toMatchObject({
      running: 1,
      waiting: 0,
      kvCacheUsage: 0.125,
      prefixCacheQueries: 64,
      prefixCacheHits: 32,
      numGpuBlocks: 1000,
      engines: ['1'],
    })
    // The whole pod: engines summed (blocks too), usage averaged.
    expect(extractVllmLoadSignals(samples, 'Qwen/Qwen3-8B')).toMatchObject({
      running: 4,
      numGpuBlocks: 2000,
      kvCacheUsage: 0.3125,
      engines: ['0', '1'],
    })
  })

  it('renders one engine exactly as createVllmMetrics does', () => {
    const one = createDataParallelVllmMetrics({ ...base, engines: 1 })
    const single = createVllmMetrics(base)
    for (const metrics of [one.engines[0], single]) {
      metrics?.setState({ running: 2, waiting: 5, kvCacheUsage: 0.75 })
      metrics?.recordStep({ promptTokens: 40, generationTokens: 3, timesToFirstToken: [0.2] })
    }
    expect(one.render()).toBe(single.render())
  })

  it('refuses no engine, and LoRA metrics with several (vLLM registers none then)', () => {
    expect(() => createDataParallelVllmMetrics({ ...base, engines: 0 })).toThrow(/engines/)
    expect(() =>
      createDataParallelVllmMetrics({ ...base, engines: 2, lora: { maxLoras: 1 } }),
    ).toThrow(/LoRA/)
  })
})
