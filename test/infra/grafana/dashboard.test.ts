import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  exposedMetricNames,
  type SeriesKind,
  sampledLabels,
} from '../../support/exposed-metric-names.ts'
import {
  type GrafanaDashboard,
  overlappingPanels,
  queryPanels,
  queryVariables,
  readGrafanaDashboard,
  variableSelector,
} from '../../support/grafana-dashboard.ts'
import { promqlMetricNames, readPromqlNames } from '../../support/promql-metric-names.ts'
import { runPromtool } from '../../support/promtool.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { scrapeServiceMetrics } from '../../support/scrape-service-metrics.ts'

const file = 'infra/grafana/kinference.json'
const { uniquePrefix } = useRedisTestNamespaces()

/** Every PromQL expression of the dashboard, where it is. */
function expressions(dashboard: GrafanaDashboard): { where: string; expr: string }[] {
  const panels = queryPanels(dashboard).flatMap((panel) =>
    panel.targets.map((target) => ({
      where: `panel ${panel.id} "${panel.title}" ${target.refId}`,
      expr: target.expr,
    })),
  )
  const variables = queryVariables(dashboard).flatMap((variable) => {
    const selector = variableSelector(variable.query.query)
    return selector === null ? [] : [{ where: `variable ${variable.name}`, expr: selector }]
  })
  return [...panels, ...variables]
}

/** The expression as Prometheus gets it once Grafana has filled its variables in. */
function asGrafanaSends(expr: string): string {
  const filled = expr.replaceAll('$__rate_interval', '5m').replaceAll('$pool', '.*')
  if (filled.includes('$')) throw new Error(`unknown variable left in ${expr}`)
  return filled
}

describe(`the Grafana dashboard ${file}`, () => {
  const dashboard = readGrafanaDashboard(file)
  const queries = expressions(dashboard)

  it('is a dashboard: unique panel ids, panels that do not overlap, a pool variable', () => {
    const ids = dashboard.panels.map((panel) => panel.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(overlappingPanels(dashboard)).toEqual([])
    const pool = queryVariables(dashboard).find((variable) => variable.name === 'pool')
    expect(pool).toMatchObject({ multi: true, includeAll: true, allValue: '.*' })
    expect(pool?.query.query).toMatch(/^label_values\(kinference_scorer_\w+, pool\)$/)
    expect(pool?.definition).toBe(pool?.query.query)
  })

  it('filters every scorer series by the pool variable', () => {
    const unfiltered = queries.filter(({ expr }) =>
      [...expr.matchAll(/kinference_scorer_\w+(\{[^}]*\})?/g)].some(
        ([, matchers]) => !matchers?.includes('pool=~"$pool"'),
      ),
    )
    expect(unfiltered.filter(({ where }) => !where.startsWith('variable'))).toEqual([])
  })

  it('parses as PromQL (promtool check rules, with the variables filled in)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kinference-dashboard-'))
    try {
      const rules = queries.map(({ expr }, i) => ({
        record: `dashboard:query_${i}`,
        expr: asGrafanaSends(expr),
      }))
      const path = join(dir, 'dashboard-rules.yaml')
      writeFileSync(path, JSON.stringify({ groups: [{ name: 'dashboard', rules }] }))
      const run = runPromtool(['check', 'rules', path])
      expect(run.output).toContain(`SUCCESS: ${rules.length} rules found`)
      expect(run.status).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  describe('against the metrics the services expose', () => {
    let exposed: Map<string, SeriesKind>
    let labelled: Map<string, Set<string>>
    beforeAll(async () => {
      const texts = (await scrapeServiceMetrics({ redisPrefix: uniquePrefix() })).map((e) => e.text)
      exposed = exposedMetricNames(texts)
      labelled = sampledLabels(texts)
    }, 60_000)

    it('names only metrics that exist, histograms by their _bucket, _sum and _count', () => {
      const missing = queries.flatMap(({ where, expr }) =>
        promqlMetricNames(expr)
          .filter((name) => !exposed.has(name))
          .map((name) => `${where}: ${name}`),
      )
      expect(missing).toEqual([])
    })

    it('takes rates of counters and histogram series only, quantiles of buckets only', () => {
      const wrong = queries.flatMap(({ where, expr }) => [
        ...[...expr.matchAll(/\b(?:rate|irate|increase)\(\s*([a-zA-Z_:][\w:]*)/g)]
          .filter(
            ([, name]) =>
              !['counter', 'histogram bucket', 'histogram sum or count'].includes(
                exposed.get(name ?? '') ?? '',
              ),
          )
          .map(([, name]) => `${where}: rate of ${name} (${exposed.get(name ?? '')})`),
        ...(expr.includes('histogram_quantile(') &&
        !/histogram_quantile\([\d.]+, sum by \((?:\w+, )*le\) \(rate\(\w+_bucket\b/.test(expr)
          ? [`${where}: histogram_quantile not over sum by (…, le) of a _bucket rate`]
          : []),
      ])
      expect(wrong).toEqual([])
    })

    it('filters and groups only by labels the metrics it names carry', () => {
      // Prometheus adds the target's labels when it scrapes.
      const targetLabels = ['instance', 'job']
      const unsampled = (expr: string) => promqlMetricNames(expr).filter((m) => !labelled.has(m))
      const wrong = queries.flatMap(({ where, expr }) => {
        if (unsampled(expr).length > 0) return []
        const { metrics, labels } = readPromqlNames(expr)
        const carried = new Set([
          ...targetLabels,
          ...metrics.flatMap((m) => [...(labelled.get(m) ?? [])]),
        ])
        return labels.filter((label) => !carried.has(label)).map((label) => `${where}: ${label}`)
      })
      expect(wrong).toEqual([])
      // What the scrape's traffic gave no sample of, and so could not be checked: failures
      // it does not provoke.
      expect(new Set(queries.flatMap(({ expr }) => unsampled(expr)))).toEqual(
        new Set([
          'kinference_edge_scorer_unreachable_total',
          'kinference_edge_pii_detector_failures_total',
          'kinference_scorer_retries_total',
          'kinference_controller_publish_failures_total',
          'kinference_controller_watch_restarts_total',
        ]),
      )
    })

    it('covers what issue 14 asks for', () => {
      const used = new Set(queries.flatMap(({ expr }) => promqlMetricNames(expr)))
      const asked = {
        'request rate': 'kinference_edge_requests_total',
        'request rate by pool': 'kinference_scorer_requests_total',
        'TTFT percentiles by pool': 'kinference_scorer_ttft_seconds_bucket',
        'e2e percentiles by pool': 'kinference_scorer_e2e_seconds_bucket',
        'hit rate': 'kinference_scorer_matched_tokens_total',
        'prediction error': 'kinference_scorer_ttft_prediction_error_ratio_bucket',
        bursts: 'kinference_edge_burst_total',
        'PII kept local': 'kinference_edge_pii_kept_local_total',
        'quota refusals': 'kinference_edge_quota_exceeded_total',
        'index events': 'kinference_scorer_event_batches_total',
        'index replays': 'kinference_scorer_event_problems_total',
        'controller reconciles': 'kinference_controller_reconciles_total',
      }
      expect(Object.entries(asked).filter(([, name]) => !used.has(name))).toEqual([])
    })

    it('covers what issue 28 asks for: usage by tenant and model, errors, saturation, processes', () => {
      const used = new Set(queries.flatMap(({ expr }) => promqlMetricNames(expr)))
      const asked = [
        'kinference_edge_prompt_tokens_total',
        'kinference_edge_completion_tokens_total',
        'kinference_edge_ttft_seconds_bucket',
        'kinference_edge_e2e_seconds_bucket',
        'kinference_scorer_pool_saturation',
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_p99_seconds',
      ]
      expect(asked.filter((name) => !used.has(name))).toEqual([])
      // The error ratio reads the edge's own errors: its requests counter has them.
      expect(
        queries.some(
          ({ expr }) =>
            expr.includes('kinference_edge_requests_total{status=~"[45].."}') &&
            expr.includes('by (tenant)'),
        ),
      ).toBe(true)
      for (const name of asked.filter((n) => n.startsWith('kinference_edge_')))
        expect(labelled.get(name), name).toEqual(
          new Set(['tenant', 'model', ...(name.endsWith('_bucket') ? ['le'] : [])]),
        )
    })
  })
})
