import type { EdgeMetrics } from './edge-metrics.ts'
import type { EdgeRequestObserver } from './observe-edge-requests.ts'

/**
 * The edge's per-request series: each answer counts once, by tenant, model and status;
 * successful completions add their tokens, time to first token and end-to-end latency (a
 * stream's only when it ended whole). A /v1/responses request is counted as the chat
 * request it was handed to, not twice.
 */
export function meterEdgeRequests(metrics: EdgeMetrics): EdgeRequestObserver {
  return {
    answered: (answered) => {
      if (answered.handedOver) return
      metrics.inc('requests', { ...answered.labels, status: String(answered.status) })
    },
    firstText: (answered, seconds) => {
      if (!answered.handedOver) metrics.observe('ttft_seconds', answered.labels, seconds)
    },
    ended: (_, ended) => {
      if (ended.handedOver || ended.tokens === null) return
      metrics.addTokens('prompt_tokens', ended.labels, ended.tokens.prompt)
      metrics.addTokens('completion_tokens', ended.labels, ended.tokens.completion)
      if (ended.complete) metrics.observe('e2e_seconds', ended.labels, ended.e2eSeconds)
    },
  }
}
