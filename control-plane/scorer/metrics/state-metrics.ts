import type {
  CounterChild,
  PrometheusRegistry,
} from '../../../shared/metrics/create-prometheus-registry.ts'
import type { ColdLookupReason } from '../../kv-index/guarded-kv-index.ts'

/** What the scorer's use of the shared state (Redis) loses, on its /metrics (docs/shared-state.md). */
export interface StateMetrics {
  decisionsDropped: CounterChild
  podViewWriteFailures: CounterChild
  /** Lookups routed cache-cold because the shared index failed, was late or is out. */
  coldLookups: (reason: ColdLookupReason) => CounterChild
  indexResyncs: CounterChild
}

/** Registered beside the scorer's own metrics; all start at 0, so a rate is defined. */
export function createStateMetrics(registry: PrometheusRegistry): StateMetrics {
  const cold = registry.counter(
    'kinference_scorer_index_cold_lookups',
    'Index lookups routed cache-cold (load only): the shared index failed (error), answered too late (deadline), or was known to be out (outage).',
  )
  for (const reason of ['error', 'deadline', 'outage'] as const) cold.labels({ reason })
  return {
    coldLookups: (reason) => cold.labels({ reason }),
    indexResyncs: registry
      .counter(
        'kinference_scorer_index_resyncs',
        "Times the shared index answered again after an outage and every pod's KV-event history was replayed into it.",
      )
      .labels({}),
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
