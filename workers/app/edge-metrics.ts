import {
  type CounterChild,
  createPrometheusRegistry,
  type HistogramChild,
  type MetricFamily,
} from '../../shared/metrics/create-prometheus-registry.ts'

/**
 * The edge's metrics, rendered in Prometheus' text format: on Node by the metrics listener
 * (control-plane/edge/start-edge.ts), in a Worker on its admin route (worker-metrics-route.ts).
 */
export interface EdgeMetrics {
  inc(name: EdgeCounter, labels?: Record<string, string>): void
  /** Adds tokens a request used, by tenant and model (edge-request-labels.ts bounds both). */
  addTokens(name: EdgeTokenCounter, labels: EdgeRequestLabels, tokens: number): void
  /** One latency of an answered request, in seconds. */
  observe(name: EdgeHistogram, labels: EdgeRequestLabels, seconds: number): void
  render(): string
}

/** The bounded labels of the per-request series: a configured tenant, a policy's model. */
export interface EdgeRequestLabels {
  tenant: string
  model: string
}

export type EdgeCounter =
  | 'requests'
  | 'rejected'
  | 'quota_exceeded'
  | 'quota_fallback'
  | 'pii_detected'
  | 'pii_detector_failures'
  | 'pii_unreadable'
  | 'pii_kept_local'
  | 'scorer_unreachable'
  | 'burst'

export type EdgeTokenCounter = 'prompt_tokens' | 'completion_tokens'
export type EdgeHistogram = 'ttft_seconds' | 'e2e_seconds'

const help: Record<EdgeCounter, string> = {
  requests:
    "Requests answered, the edge's own errors (401, 400, 404, 429, 503 ...) included, by tenant, model and HTTP status.",
  rejected: 'Requests refused by policy, by code.',
  quota_exceeded: 'Requests refused by a tenant quota, by limit.',
  quota_fallback:
    'Admissions while the quota store could not be reached, by failure mode: FailOpen admitted against the bucket of this edge process or isolate, FailClose refused with 503.',
  pii_detected: 'Requests the detectors labelled, by label.',
  pii_detector_failures: 'Detector failures (the request then counts as PII: fail closed).',
  pii_unreadable:
    'Requests with content the PII scan cannot read (images, binary data, over-deep or over-long encodings): they count as PII (fail closed).',
  pii_kept_local:
    'PII requests refused rather than sent outside the cluster (saturated, unreachable, or a detector failure).',
  scorer_unreachable: 'Times the scorer could not be reached.',
  burst:
    'Requests served by an external backend after the local pool was saturated or unreachable.',
}

const tokenHelp: Record<EdgeTokenCounter, string> = {
  prompt_tokens:
    "Prompt tokens of answered requests, by tenant and model: the answer's usage, else the prompt the request was admitted on.",
  completion_tokens:
    "Generated tokens of answered requests, by tenant and model: the answer's usage, else one per streamed event with text.",
}

/** The scorer's TTFT and end-to-end buckets (control-plane/scorer/metrics/scorer-metrics.ts). */
const histograms: Record<EdgeHistogram, { help: string; buckets: readonly number[] }> = {
  ttft_seconds: {
    help: 'Arrival at the edge to the first generated text of streamed answers, by tenant and model.',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80],
  },
  e2e_seconds: {
    help: 'Arrival at the edge to the last byte of complete answers (2xx), by tenant and model.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320],
  },
}

/**
 * The edge's registry (shared/metrics): one per Node process, one per Worker isolate.
 * `nowSeconds` stamps the `_created` samples; wall-clock seconds unless a test says.
 */
export function createEdgeMetrics(nowSeconds: () => number = () => Date.now() / 1000): EdgeMetrics {
  const registry = createPrometheusRegistry({ now: nowSeconds })
  const counters = new Map<string, MetricFamily<CounterChild>>()
  for (const [name, text] of Object.entries(help))
    counters.set(name, registry.counter(`kinference_edge_${name}`, text))
  for (const [name, text] of Object.entries(tokenHelp))
    counters.set(name, registry.counter(`kinference_edge_${name}`, text))
  const latencies = new Map<string, MetricFamily<HistogramChild>>()
  for (const [name, { help: text, buckets }] of Object.entries(histograms))
    latencies.set(name, registry.histogram(`kinference_edge_${name}`, text, buckets))
  return {
    inc(name, labels = {}) {
      counters.get(name)?.labels(labels).inc()
    },
    addTokens(name, { tenant, model }, tokens) {
      if (tokens > 0) counters.get(name)?.labels({ tenant, model }).inc(tokens)
    },
    observe(name, { tenant, model }, seconds) {
      latencies.get(name)?.labels({ tenant, model }).observe(Math.max(0, seconds))
    },
    render: () => registry.render(),
  }
}
