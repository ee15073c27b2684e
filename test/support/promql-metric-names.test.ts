import { describe, expect, it } from 'vitest'
import { promqlMetricNames, readPromqlNames, tokenizePromql } from './promql-metric-names.ts'

describe('promqlMetricNames', () => {
  it.each([
    ['up', ['up']],
    ['vllm:kv_cache_usage_perc{model_name="m"}', ['vllm:kv_cache_usage_perc']],
    [
      'histogram_quantile(0.99, sum by (pool, le) (rate(kinference_scorer_ttft_seconds_bucket{pool=~"$pool"}[$__rate_interval])))',
      ['kinference_scorer_ttft_seconds_bucket'],
    ],
    [
      'sum(rate(a_total[5m] offset 1h)) by (job) / ignoring (code) group_left (pool) b_total',
      ['a_total', 'b_total'],
    ],
    ['sum without (instance) (x) > bool 0 and on (pod) y unless z', ['x', 'y', 'z']],
    ['{__name__="x_count", le!="+Inf"} / max_over_time(x_count[1h:5m])', ['x_count']],
    ['topk(5, count_values("by", x))', ['x']],
    ['label_replace(q, "dst", "$1", "src", "(.*)") * on (pod) group_left w', ['q', 'w']],
    ['time() - max(kinference_x_created{a="by (x)"}) @ end()', ['kinference_x_created']],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax
    ['${datasource} + [[legacy]] + $var + 1e-3 * 0x1f + 1h30m', []],
  ])('%s', (query, names) => {
    expect(promqlMetricNames(query)).toEqual(names)
  })

  it('refuses what it cannot check or read (the syntax is promtool check rules’ to judge)', () => {
    expect(() => promqlMetricNames('{__name__=~"kinference_.*"}')).toThrow(/cannot be checked/)
    expect(() => promqlMetricNames('rate(x[5m]')).not.toThrow()
    expect(() => promqlMetricNames('sum(x{a="b"')).toThrow(/unclosed \{/)
    expect(() => tokenizePromql('x ; y')).toThrow(/unexpected/)
  })

  it('reads the labels of matchers and of by, without, on, ignoring and group lists', () => {
    expect(
      readPromqlNames(
        'sum by (pool, le) (rate(x_bucket{pool=~"$pool", a!="b,c"}[5m])) / on (pod) group_left (node) sum without (z) (y{__name__="y"})',
      ),
    ).toEqual({ metrics: ['x_bucket', 'y'], labels: ['pool', 'le', 'a', 'pod', 'node', 'z'] })
  })
})
