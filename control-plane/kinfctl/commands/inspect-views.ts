import type { Decision } from '../../../shared/state/decision-entry.ts'
import type { DecisionSummary } from '../../../shared/state/decision-summary.ts'
import { isExternalDecision } from '../../../shared/state/external-strategy.ts'
import type { PodState } from '../../../shared/state/pod-state.ts'
import type { PoolState } from '../../../shared/state/pool-state.ts'
import type { QuotaUse } from '../../../shared/state/quota-use.ts'
import type { SnapshotChange } from '../../../shared/state/snapshot-changes.ts'
import type { PrefixReport } from '../../state/prefix-report.ts'
import type { SnapshotReport } from '../../state/state-reader.ts'
import { type PrefixScope, prefixScopeNotes } from './inspect-prefix-scope.ts'
import { cell, type Rendered } from './render-output.ts'

export function podsView(
  pods: readonly PodState[],
  pools: readonly PoolState[],
  nowMs: number,
): Rendered {
  return {
    data: { pods, pools },
    columns: [
      'POOL',
      'POD',
      'READY',
      'TRUST',
      'DRIFT',
      'BLOCKS',
      'KV',
      'RUNNING',
      'WAITING',
      'IN-FLIGHT',
      'TTFT-MODEL',
      'SEQ',
      'EVENT-AGE',
      'REPLAYS',
      'RESTARTS',
      'REPLICAS',
    ],
    rows: pods.map((pod) => [
      pod.pool,
      pod.pod,
      !pod.healthy ? 'unhealthy' : pod.indexReady ? 'yes' : 'no-index',
      pod.trust,
      pod.drift.toFixed(3),
      cell.count(pod.blocksIndexed),
      cell.percent(pod.kvCacheUsage),
      cell.count(pod.running),
      cell.count(pod.waiting),
      String(pod.inFlight),
      `${pod.ttft.overheadMs.toFixed(1)}ms+${pod.ttft.msPerToken.toFixed(4)}ms/tok`,
      cell.text(pod.events?.lastSeq),
      cell.age(pod.events?.lastBatchAtMs, nowMs),
      cell.count(pod.events?.replays),
      cell.count(pod.events?.restarts),
      String(pod.replicas.length),
    ]),
    notes: poolNotes(pools, nowMs),
  }
}

/**
 * Under the pods, each pool condition that says something is wrong (False), with since
 * when and its message: a tokenizer that cannot be loaded, counts the pods disagree with.
 */
function poolNotes(pools: readonly PoolState[], nowMs: number): string[] {
  return pools.flatMap((pool) =>
    pool.conditions
      .filter((condition) => condition.status === 'False')
      .map(
        (c) =>
          `pool ${pool.pool}: ${c.type} False (${c.reason}) for ${cell.age(c.lastTransitionMs, nowMs)} on ${c.replicas.join(', ')}: ${c.message}`,
      ),
  )
}

export function decisionColumns(): string[] {
  return [
    'TIME',
    'REQUEST',
    'TENANT',
    'RULE',
    'BACKEND',
    'POOL',
    'POD',
    'STRATEGY',
    'MATCHED',
    'PREDICTED',
    'ACTUAL',
    'CACHED',
    'OUTPUT',
    'OUTCOME',
  ]
}

export function decisionRow(d: Decision): string[] {
  // An external provider's: no pod was asked, so nothing was matched or predicted.
  const external = isExternalDecision(d)
  return [
    new Date(d.atMs).toISOString().slice(11, 23),
    d.requestId,
    cell.text(d.tenant),
    d.rule === null ? '-' : `${d.policy}/${d.rule}`,
    cell.text(d.backend),
    d.pool,
    d.pod,
    d.strategy,
    external ? `-/${d.promptTokens}` : `${d.matchedTokens}/${d.promptTokens}`,
    external ? '-' : cell.ms(d.predictedTtftMs),
    cell.ms(d.end?.ttftMs),
    cell.count(d.end?.cachedTokens),
    cell.count(d.end?.outputTokens),
    d.end === null ? 'in-flight' : d.end.outcome,
  ]
}

export function summaryLine(s: DecisionSummary): string {
  const error = s.absoluteErrorMs
    ? `TTFT |actual-predicted| p50 ${cell.ms(s.absoluteErrorMs.p50)}, p90 ${cell.ms(s.absoluteErrorMs.p90)}, p99 ${cell.ms(s.absoluteErrorMs.p99)}, median (actual-predicted)/actual ${cell.percent(s.medianRelativeError)}`
    : 'no TTFT measured yet (streamed answers only)'
  return `${s.decisions} decisions, ${s.ended} ended (${s.completed} completed); ${error}; hit rate ${cell.percent(s.hitRate)} reported by the pods, ${cell.percent(s.predictedHitRate)} matched by the index`
}

export function decisionsView(decisions: readonly Decision[], summary: DecisionSummary): Rendered {
  return {
    data: { decisions, summary },
    columns: decisionColumns(),
    rows: decisions.map(decisionRow),
    notes: [summaryLine(summary)],
  }
}

export function quotasView(uses: readonly QuotaUse[]): Rendered {
  const bucket = (b: QuotaUse['requests']) =>
    b === null ? '-' : `${Math.floor(b.available)}/${b.capacity}`
  return {
    data: { accounts: uses },
    columns: ['ACCOUNT', 'KIND', 'OWNER', 'REQUESTS-LEFT', 'TOKENS-LEFT', 'USED'],
    rows: uses.map((use) => [
      use.account,
      use.kind,
      use.owner,
      bucket(use.requests),
      bucket(use.tokens),
      use.untouched ? 'never' : usedShare(use),
    ]),
    notes: uses.length === 0 ? ['the live snapshot sets no quotas'] : [],
  }
}

/** The larger share used of the account's buckets, now. */
function usedShare(use: QuotaUse): string {
  const shares = [use.requests, use.tokens].flatMap((b) =>
    b === null ? [] : [1 - b.available / b.capacity],
  )
  return cell.percent(Math.max(0, ...shares))
}

export function snapshotView(
  report: SnapshotReport,
  diff: { against: string; changes: SnapshotChange[] } | null,
): Rendered {
  const changes = diff?.changes ?? report.previous?.changes ?? []
  const { snapshot } = report
  const count = (record: object) => Object.keys(record).length
  const since = diff
    ? `differences from ${diff.against}`
    : report.previous
      ? `changes since version ${report.previous.version}`
      : 'no earlier version kept to compare with'
  return {
    data: {
      version: report.version,
      hash: report.hash,
      publishedAt: new Date(report.publishedAt).toISOString(),
      previous: report.previous,
      ...(diff ? { diff } : {}),
    },
    columns: ['SECTION', 'ID', 'CHANGE'],
    rows: changes.map((c) => [c.section, c.id, c.change]),
    notes: [
      `version ${report.version} ${report.hash}, published ${new Date(report.publishedAt).toISOString()}: ${count(snapshot.pools)} pools, ${count(snapshot.backends)} backends, ${count(snapshot.providers)} providers, ${count(snapshot.policies)} policies, ${count(snapshot.tenants)} tenants`,
      `${since}: ${changes.length === 0 ? 'none' : changes.length}`,
    ],
  }
}

export function prefixView(report: PrefixReport, scope: PrefixScope): Rendered {
  return {
    data: { ...report, scope },
    columns: ['POD', 'BLOCKS', 'MATCHED', 'TRUST', 'PREDICTED', 'KV', 'WAITING', 'CHOSEN'],
    rows: report.pods.map((pod) => [
      pod.pod,
      String(pod.matchedBlocks),
      `${pod.matchedTokens}/${report.promptTokens}`,
      cell.text(pod.trust),
      cell.ms(pod.predictedTtftMs),
      cell.percent(pod.kvCacheUsage),
      cell.count(pod.waiting),
      pod.pod === report.chosen ? '*' : '',
    ]),
    notes: [
      `pool ${report.pool}, model ${report.model}: ${report.promptTokens} prompt tokens, ${report.blocks} blocks; ${report.strategy} would choose ${report.chosen ?? 'no pod'}: ${report.reason}`,
      ...prefixScopeNotes(scope),
    ],
  }
}
