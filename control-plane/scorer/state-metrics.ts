import type { CounterChild, PrometheusRegistry } from '../metrics/create-prometheus-registry.ts'

/** What the scorer's writes to the shared state lose, on its /metrics (docs/shared-state.md). */
export interface StateMetrics {
  decisionsDropped: CounterChild
  podViewWriteFailures: CounterChild
}

/** Registered beside the scorer's own metrics; both start at 0, so a rate is defined. */
export function createStateMetrics(registry: PrometheusRegistry): StateMetrics {
  return {
    decisionsDropped: registry
      .counter(
        'kinference_scorer_decision_log_dropped',
        'Decision log entries dropped: the write to the shared state failed, or too many waited.',
      )
      .labels({}),
    podViewWriteFailures: registry
      .counter(
        'kinference_scorer_pod_view_write_failures',
        "Writes of this replica's pod view to the shared state that failed.",
      )
      .labels({}),
  }
}
