/**
 * vLLM's `build_1_2_5_buckets(max_value)`: 1, 2, 5, 10, 20, 50, … while the value is at
 * most `maxValue` (`vllm/v1/metrics/loggers.py`). The token-count histograms use it with
 * max_model_len: `build125Buckets(100)` is `[1, 2, 5, 10, 20, 50, 100]`.
 */
export function build125Buckets(maxValue: number): number[] {
  const buckets: number[] = []
  for (let scale = 1; ; scale *= 10) {
    for (const mantissa of [1, 2, 5]) {
      const value = mantissa * scale
      if (value > maxValue) return buckets
      buckets.push(value)
    }
  }
}

const requestLatency = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
  480.0, 960.0, 1920.0, 7680.0,
] as const

const perOutputToken = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
  40.0, 80.0,
] as const

/** The fixed bucket bounds of vLLM V1's histograms (`PrometheusStatLogger`). */
export const vllmHistogramBuckets = {
  timeToFirstToken: [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
  ],
  /** `inter_token_latency_seconds` and `request_time_per_output_token_seconds`. */
  perOutputToken,
  /** e2e, queue, inference, prefill and decode times of a request. */
  requestLatency,
  iterationTokens: [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
  requestParamsN: [1, 2, 5, 10, 20],
} as const satisfies Record<string, readonly number[]>
