import { conditionStatuses } from '../../../shared/state/pool-state.ts'
import type { IngestorCounters } from '../../kv-feeds/pod-event-ingestor.ts'
import type { LivePools } from '../pools/live-pools.ts'
import type { PoolRuntime } from '../pools/pool-runtime.ts'
import { poolLoadSaturation } from './pool-load-saturation.ts'
import type { ScorerMetrics } from './scorer-metrics.ts'

/** The `kind` label of kinference_scorer_event_problems, per ingestor counter. */
const problemKinds = {
  gaps: 'gap',
  replays: 'replay',
  restarts: 'restart',
  unrepairable: 'unrepairable',
  applyErrors: 'apply-error',
} as const satisfies Partial<Record<keyof IngestorCounters, string>>

/**
 * What a scrape refreshes before rendering: held requests per pool, its tokenizer and
 * conditions, each pod's drift and trust, and the pods' KV-event counters, which the ingestors keep as plain numbers
 * (control-plane/kv-feeds/pod-event-ingestor.ts) and the counters here follow. A feed that
 * starts over (the pod left and came back) counts on from where its counter was.
 */
export function createScorerMetricsRefresh(
  metrics: ScorerMetrics,
): (live: LivePools, nowMs: number) => void {
  const seen = new Map<string, number>()
  const follow = (counter: { inc(amount: number): void }, key: string, current: number): void => {
    const before = seen.get(key) ?? 0
    counter.inc(current >= before ? current - before : current)
    seen.set(key, current)
  }

  return (live, nowMs) => {
    const held = new Map<string, number>()
    for (const pool of live.all())
      held.set(pool.name, (held.get(pool.name) ?? 0) + pool.admission.held)
    for (const [pool, count] of held) metrics.heldRequests.labels({ pool }).set(count)
    for (const pool of live.current.pools) refreshPoolConditions(metrics, pool)
    for (const pool of live.current.pools) {
      const reports = pool.router.podReports(nowMs)
      metrics.poolSaturation.labels({ pool: pool.name }).set(poolLoadSaturation(pool.spec, reports))
      for (const report of reports) {
        const labels = { pool: pool.name, pod: report.name }
        metrics.drift.labels(labels).set(report.drift)
        for (const state of ['precise', 'approximate', 'load-only']) {
          metrics.trust.labels({ ...labels, state }).set(report.trust === state ? 1 : 0)
        }
        const counters = pool.ingestorCounters(report.name)
        if (counters === null) continue
        const key = `${pool.name}\n${report.name}`
        follow(metrics.eventBatches.labels(labels), `${key}\nbatches`, counters.batches)
        for (const [field, kind] of Object.entries(problemKinds)) {
          follow(
            metrics.eventProblems.labels({ ...labels, kind }),
            `${key}\n${kind}`,
            counters[field as keyof typeof problemKinds],
          )
        }
        for (const [reason, count] of Object.entries(counters.skipped)) {
          follow(
            metrics.eventsSkipped.labels({ ...labels, reason }),
            `${key}\nskipped\n${reason}`,
            count,
          )
        }
      }
    }
  }
}

/** The pool's tokenizer readiness and conditions; its comparison counters start at 0. */
function refreshPoolConditions(metrics: ScorerMetrics, pool: PoolRuntime): void {
  const labels = { pool: pool.name }
  metrics.tokenizerReady.labels(labels).set(pool.tokenizerReady ? 1 : 0)
  for (const condition of pool.conditions(Date.now()))
    for (const status of conditionStatuses)
      metrics.poolCondition
        .labels({ ...labels, condition: condition.type, status })
        .set(condition.status === status ? 1 : 0)
  for (const kind of ['prompt', 'cached']) {
    metrics.tokenComparisons.labels({ ...labels, kind })
    metrics.tokenDisagreements.labels({ ...labels, kind })
  }
}
