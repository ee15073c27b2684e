import type { ConfigSnapshot } from '../../../../shared/config/config-snapshot.ts'
import { byLabel, type ControllerProcess, type MetricTotals } from './controller-process.ts'

/** What the controller's /metrics and the benchmark counted over the changes. */
export interface ControllerTotals {
  reconciles: number
  reconcilesByResult: Record<string, number>
  /** Watch events that mattered, by kind (a Pod and its slice are two). */
  changesSeen: number
  changesByKind: Record<string, number>
  /** Status writes the controller counted as written, and as computed but unchanged. */
  statusWritesMetric: number
  statusUnchanged: number
  /** Status PUTs the API server answered. */
  statusWritesApi: number
  /** Snapshot versions Redis handed out. */
  versions: number
  reconcileMeanMs: number
}

/** Deltas of the controller's counters since `before`, with what the benchmark counted. */
export async function controllerTotals(
  controller: ControllerProcess,
  before: MetricTotals,
  measured: { statusWritesApi: number; versions: number },
): Promise<ControllerTotals> {
  const after = await controller.metrics()
  const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0)
  const deltas = (name: string, label: string) => {
    const was = byLabel(before, name, label)
    const now = byLabel(after, name, label)
    return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - (was[k] ?? 0)]))
  }
  const reconciles = delta('kinference_controller_reconciles_total')
  const statusByResult = deltas('kinference_controller_status_writes_total', 'result')
  const seconds = 'kinference_controller_reconcile_seconds'
  return {
    reconciles,
    reconcilesByResult: deltas('kinference_controller_reconciles_total', 'result'),
    changesSeen: delta('kinference_controller_changes_total'),
    changesByKind: deltas('kinference_controller_changes_total', 'kind'),
    statusWritesMetric: statusByResult.written ?? 0,
    statusUnchanged: statusByResult.unchanged ?? 0,
    ...measured,
    reconcileMeanMs:
      delta(`${seconds}_count`) === 0
        ? 0
        : (delta(`${seconds}_sum`) * 1000) / delta(`${seconds}_count`),
  }
}

/** Mean of a histogram so far, in ms. */
export function histogramMeanMs(totals: MetricTotals, name: string): number {
  const count = totals.get(`${name}_count`) ?? 0
  return count === 0 ? 0 : ((totals.get(`${name}_sum`) ?? 0) * 1000) / count
}

/** The first snapshot's size; throws unless it holds every pool, policy and endpoint. */
export function checkFirstSnapshot(
  snapshot: ConfigSnapshot,
  expected: { pools: number; policies: number; endpoints: number },
) {
  const counts = {
    pools: Object.keys(snapshot.pools).length,
    policies: Object.keys(snapshot.policies).length,
    backends: Object.keys(snapshot.backends).length,
    endpoints: Object.values(snapshot.endpoints).reduce((sum, list) => sum + list.length, 0),
  }
  if (
    counts.pools !== expected.pools ||
    counts.policies !== expected.policies ||
    counts.endpoints !== expected.endpoints
  )
    throw new Error(
      `the first snapshot holds ${JSON.stringify(counts)}, not ${JSON.stringify(expected)}: a resource did not validate`,
    )
  return counts
}
