import { createPrometheusRegistry } from '../../../shared/metrics/create-prometheus-registry.ts'

const latencyBuckets = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1]
const holdBuckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]
const ttftBuckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80]
const e2eBuckets = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320]
const errorBuckets = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5]

/**
 * The scorer's own Prometheus metrics (GET /metrics). Per-pod series carry `pool` too, so
 * infra/grafana/kinference.json can filter every panel by pool.
 */
export function createScorerMetrics(now: () => number) {
  const registry = createPrometheusRegistry({ now })
  return {
    registry,
    requests: registry.counter('kinference_scorer_requests', 'Requests by pool, pod and outcome.'),
    decisionSeconds: registry.histogram(
      'kinference_scorer_decision_seconds',
      'Time to choose a pod: tokenize, index lookup, scoring.',
      latencyBuckets,
    ),
    ttftSeconds: registry.histogram(
      'kinference_scorer_ttft_seconds',
      'Observed time to first token of streamed requests, by pool and pod.',
      ttftBuckets,
    ),
    e2eSeconds: registry.histogram(
      'kinference_scorer_e2e_seconds',
      'Arrival to the last byte of completed requests, by pool.',
      e2eBuckets,
    ),
    predictionError: registry.histogram(
      'kinference_scorer_ttft_prediction_error_ratio',
      'Relative error of the predicted TTFT, |observed - predicted| / observed, by pool.',
      errorBuckets,
    ),
    predictedTtftSeconds: registry.histogram(
      'kinference_scorer_predicted_ttft_seconds',
      'Predicted time to first token of the chosen pod.',
      ttftBuckets,
    ),
    matchedTokens: registry.counter(
      'kinference_scorer_matched_tokens',
      'Prompt tokens the chosen pod held, per the index, by pool and pod.',
    ),
    promptTokens: registry.counter(
      'kinference_scorer_prompt_tokens',
      'Prompt tokens of completed requests, by pool and pod.',
    ),
    drift: registry.gauge(
      'kinference_scorer_index_drift',
      'Mean relative error of predicted vs reported cached tokens, by pool and pod.',
    ),
    trust: registry.gauge(
      'kinference_scorer_index_trust',
      '1 for the index trust state a pod is in (precise, approximate, load-only), by pool and pod.',
    ),
    eventBatches: registry.counter(
      'kinference_scorer_event_batches',
      'KV-event batches applied to the index, by pool and pod.',
    ),
    eventProblems: registry.counter(
      'kinference_scorer_event_problems',
      'KV-event gaps, replays, restarts, unrepairable gaps and apply errors, by pool, pod and kind.',
    ),
    eventsSkipped: registry.counter(
      'kinference_scorer_events_skipped',
      'KV events left out of an applied batch one at a time (the rest applied), by pool, pod and reason: not_an_event, no_type, unknown_type, invalid_<wire field>.',
    ),
    saturated: registry.counter(
      'kinference_scorer_saturated',
      'Requests answered "saturated" for the edge to burst, by pool.',
    ),
    poolSaturation: registry.gauge(
      'kinference_scorer_pool_saturation',
      "How close the pool is to its limits at the scrape, by pool: its least saturated pod's larger of queue / queueDepthThreshold and KV use / kvCacheUtilThreshold (0 idle, 1 every pod at a limit, above 1 past them; 1 with no pod). For autoscalers.",
    ),
    heldRequests: registry.gauge(
      'kinference_scorer_held_requests',
      'Requests held by late binding until their best pod can start them, by pool.',
    ),
    holdSeconds: registry.histogram(
      'kinference_scorer_hold_seconds',
      'Time requests were held by late binding, by pool and how the hold ended (dispatched, client-gone, shutdown).',
      holdBuckets,
    ),
    tokenizations: registry.counter(
      'kinference_scorer_tokenizations',
      'Prompts tokenized, by pool: one per request, whatever the policy.',
    ),
    lookups: registry.counter(
      'kinference_scorer_index_lookups',
      'Index lookups (one round trip each), by pool: one per request, whatever the policy.',
    ),
    tokenComparisons: registry.counter(
      'kinference_scorer_token_comparisons',
      "Answered requests whose count the pod reported was compared with the scorer's, by pool and kind (prompt: usage.prompt_tokens against the scorer's tokenization; cached: cached_tokens against the index's prediction).",
    ),
    tokenDisagreements: registry.counter(
      'kinference_scorer_token_disagreements',
      "Those comparisons that disagreed, by pool and kind: prompt_tokens other than the scorer's count, cached_tokens a block or more from the prediction.",
    ),
    tokenizerReady: registry.gauge(
      'kinference_scorer_pool_tokenizer_ready',
      "1 when every served model's tokenizer is loaded, 0 when one cannot be and the pool routes it on load alone, by pool.",
    ),
    poolCondition: registry.gauge(
      'kinference_scorer_pool_condition',
      'A pool condition (TokenizerReady, TokenizationAgrees) as this replica sees it: 1 for its status (True, False, Unknown), 0 for the others, by pool.',
    ),
    retries: registry.counter(
      'kinference_scorer_retries',
      'Requests retried on another pod after a failure before the first byte.',
    ),
  }
}

export type ScorerMetrics = ReturnType<typeof createScorerMetrics>
