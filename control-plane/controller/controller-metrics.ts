import { createPrometheusRegistry } from '../../shared/metrics/create-prometheus-registry.ts'

const reconcileBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

/** The controller's Prometheus metrics (GET /metrics). */
export function createControllerMetrics(now: () => number) {
  const registry = createPrometheusRegistry({ now })
  return {
    registry,
    changes: registry.counter(
      'kinference_controller_changes',
      'Watched changes that matter (spec, labels, endpoints), by kind.',
    ),
    reconciles: registry.counter('kinference_controller_reconciles', 'Reconciles, by result.'),
    reconcileSeconds: registry.histogram(
      'kinference_controller_reconcile_seconds',
      'Time of one reconcile: compile, publish and status writes.',
      reconcileBuckets,
    ),
    snapshotVersion: registry.gauge(
      'kinference_controller_snapshot_version',
      'Version of the live config snapshot this controller last published or saw.',
    ),
    publishFailures: registry.counter(
      'kinference_controller_publish_failures',
      'Failed snapshot publishes, by target (redis, cloudflare-kv).',
    ),
    statusWrites: registry.counter(
      'kinference_controller_status_writes',
      'Status subresource writes, by kind and result.',
    ),
    watchRestarts: registry.counter(
      'kinference_controller_watch_restarts',
      'Informers restarted after an error or a silent watch, by kind.',
    ),
    leader: registry.gauge('kinference_controller_leader', '1 while this replica holds the Lease.'),
    rejected: registry.gauge(
      'kinference_controller_rejected_resources',
      'Resources whose current generation is not accepted, by kind.',
    ),
  }
}
export type ControllerMetrics = ReturnType<typeof createControllerMetrics>
