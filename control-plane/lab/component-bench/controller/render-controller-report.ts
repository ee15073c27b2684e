import { changeKinds } from './bench-cluster.ts'
import type { ControllerBenchOptions, ControllerBenchRun } from './measure-controller.ts'
import type { ChangeRecord } from './run-changes.ts'
import { type LatencySummary, summarizeLatencies } from './summarize-latencies.ts'

type ReportOptions = Omit<ControllerBenchOptions, 'random' | 'log' | 'redisUrl'>

/** What benchmark.json holds: the options, the summaries and every change. */
export function controllerReport(options: ReportOptions, run: ControllerBenchRun) {
  const { changes, totals } = run
  const count = changes.length
  const per = (value: number) => (count === 0 ? 0 : value / count)
  const stages = (records: readonly ChangeRecord[]) => ({
    published: summarizeLatencies(records.map((r) => r.publishedMs)),
    notice: summarizeLatencies(records.flatMap((r) => r.noticeMs ?? [])),
    noticeToFollower: summarizeLatencies(
      records.flatMap((r) => (r.noticeMs === null ? [] : r.followerMs - r.noticeMs)),
    ),
    follower: summarizeLatencies(records.map((r) => r.followerMs)),
    scorerRoutes: summarizeLatencies(records.map((r) => r.scorerRoutesMs)),
    scorer: summarizeLatencies(records.map((r) => r.scorerMs)),
    statusSettled: summarizeLatencies(records.flatMap((r) => r.statusSettledMs ?? [])),
  })
  const byKind = Object.fromEntries(
    changeKinds.map((kind) => [kind, stages(changes.filter((r) => r.kind === kind))]),
  )
  // The controller's RSS after the 1st, n/4th … last change: growth shows as a slope.
  const rssTrend = [0, 0.25, 0.5, 0.75, 1].flatMap((q) => {
    const index = Math.max(0, Math.ceil(q * count) - 1)
    const record = changes[index]
    return record ? [{ afterChange: index + 1, rssBytes: record.rssBytes }] : []
  })
  return {
    benchmark: 'controller',
    options,
    snapshot: run.snapshot,
    firstPublish: run.firstPublish,
    memory: { ...run.memory, rssTrend },
    latency: { byKind, overall: stages(changes) },
    perChange: {
      changes: count,
      reconciles: per(totals.reconciles),
      mostReconciles: Math.max(0, ...changes.map((r) => r.reconciles)),
      watchedChanges: per(totals.changesSeen),
      statusWrites: per(totals.statusWritesApi),
      mostStatusWrites: Math.max(0, ...changes.map((r) => r.statusWrites)),
      statusWritesCounted: per(totals.statusWritesMetric),
      statusUnchanged: per(totals.statusUnchanged),
      versions: per(totals.versions),
    },
    totals,
    firstReconcileStatusWrites: run.firstReconcileStatusWrites,
    benchEventLoop: run.benchEventLoop,
    costs: run.costs,
    scorerOutcomes: tally(changes.map((r) => r.scorerOutcome)),
    changes,
  }
}
export type ControllerReport = ReturnType<typeof controllerReport>

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1))
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const cell = (s: LatencySummary) => `${ms(s.p50Ms)} / ${ms(s.p99Ms)} / ${ms(s.maxMs)}`
const fixed = (value: number) => value.toFixed(2)

/** The report as markdown: latencies per kind, then per-change counts, memory and start. */
export function renderControllerReport(report: ControllerReport): string {
  const { options, snapshot } = report
  return [
    `## Controller: ${options.shape.pools} pools, ${snapshot.endpoints} endpoints, ${options.shape.policies} policies (seed ${options.seed}, ${report.perChange.changes} changes, debounce ${options.debounce})`,
    '',
    'Time from the API write, ms, p50 / p99 / max (nearest rank). Published: the version’s publishedAt (the controller’s clock). Notice: the version’s notice reached a subscriber in the bench (the controller’s verify and Lua publish are done). Notice → follower: the follower’s read and verify, and its wait on the bench’s event loop. Follower = edge: the verified version handed to onSnapshot; the edge’s config() returns the follower’s current() per request, so it uses the version from then on. Scorer routes: the scorer’s live pools show the change (a new pod joins a kept pool’s router before its KV-event replay). Scorer applied: applySnapshot of that version resolved (for a new pod after its replay, which times out after 2 s here: the pods are unroutable). Status settled: the change’s last status write.',
    '',
    '| change | n | published | notice | notice → follower | follower = edge | scorer routes | scorer applied | status settled |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...[...changeKinds, 'overall'].map((kind) => {
      const s = kind === 'overall' ? report.latency.overall : report.latency.byKind[kind]
      if (!s) return ''
      return `| ${kind} | ${s.follower.count} | ${cell(s.published)} | ${cell(s.notice)} | ${cell(s.noticeToFollower)} | ${cell(s.follower)} | ${cell(s.scorerRoutes)} | ${cell(s.scorer)} | ${cell(s.statusSettled)} |`
    }),
    '',
    ...perChangeRows(report),
    '',
    ...sizeRows(report),
    '',
  ].join('\n')
}

function perChangeRows({ perChange: p }: ControllerReport): string[] {
  return [
    '| per change | mean | most for one change |',
    '| --- | ---: | ---: |',
    `| reconciles | ${fixed(p.reconciles)} | ${p.mostReconciles} |`,
    `| watched changes (changes_total; a Pod and its slice are two) | ${fixed(p.watchedChanges)} | |`,
    `| snapshot versions published | ${fixed(p.versions)} | |`,
    `| status writes (PUT …/status at the API server) | ${fixed(p.statusWrites)} | ${p.mostStatusWrites} |`,
    `| status writes counted written / unchanged (status_writes_total) | ${fixed(p.statusWritesCounted)} / ${fixed(p.statusUnchanged)} | |`,
  ]
}

function sizeRows(report: ControllerReport): string[] {
  const { snapshot, memory, firstPublish: first, costs, benchEventLoop: loop } = report
  const trend = memory.rssTrend.map((t) => `${mb(t.rssBytes)} after ${t.afterChange}`).join(', ')
  return [
    '| controller at this size | value |',
    '| --- | --- |',
    `| snapshot | ${(snapshot.bytes / 1024).toFixed(0)} KiB canonical JSON (${snapshot.pools} pools, ${snapshot.backends} backends, ${snapshot.policies} policies, ${snapshot.endpoints} endpoints) |`,
    `| VmRSS after the first snapshot (peak) | ${mb(memory.afterFirst.rssBytes)} (${mb(memory.afterFirst.peakRssBytes)}) |`,
    `| VmRSS at the end (peak) | ${mb(memory.end.rssBytes)} (${mb(memory.end.peakRssBytes)}) |`,
    `| VmRSS over the changes | ${trend} |`,
    `| spawn → running (Node start, imports, informers listed) | ${ms(first.startMs)} ms |`,
    `| running → first version at the follower | ${ms(first.firstVersionMs)} ms |`,
    `| first full compile + publish, spawn → follower | ${ms(first.totalMs)} ms |`,
    `| first reconcile (reconcile_seconds mean until then) | ${ms(first.firstReconcileMs)} ms |`,
    `| status writes of the first reconcile | ${report.firstReconcileStatusWrites} |`,
    `| mean reconcile during the changes (compile, publish, status writes) | ${ms(report.totals.reconcileMeanMs)} ms |`,
    `| canonical JSON / verify / follower read+verify of the snapshot, bench quiet | ${ms(costs.canonicalJsonMs)} / ${ms(costs.verifyMs)} / ${ms(costs.readMs)} ms |`,
    `| bench event-loop delay during the changes p50 / p99 / max | ${ms(loop.p50Ms)} / ${ms(loop.p99Ms)} / ${ms(loop.maxMs)} ms |`,
    `| scorer start from the first snapshot (in the bench) | ${ms(first.scorerStartMs)} ms |`,
  ]
}

function tally(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const value of values) out[value] = (out[value] ?? 0) + 1
  return out
}
