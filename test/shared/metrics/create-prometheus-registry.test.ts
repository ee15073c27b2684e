import { describe, expect, it } from 'vitest'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { createPrometheusRegistry } from '../../../shared/metrics/create-prometheus-registry.ts'

describe('createPrometheusRegistry', () => {
  it('renders counters, gauges and histograms as prometheus_client generate_latest does', () => {
    let clock = 1700000000.5
    const registry = createPrometheusRegistry({ now: () => clock })
    const requests = registry.counter('app:requests', 'Requests served.')
    const ok = requests.labels({ path: '/v1', code: '200' })
    clock += 1
    const failed = requests.labels({ path: '/v1', code: '500' })
    registry.gauge('app:temperature', 'Line one\nback\\slash').labels({}).set(-1.5)
    const latency = registry.histogram('app:latency_seconds', 'Latency.', [0.1, 1, 10])
    const child = latency.labels({ zone: 'a"b\\c\nd' })
    registry.gauge('app:empty', 'No child yet.')

    ok.inc()
    ok.inc(2.5)
    failed.inc(0)
    for (const value of [0.05, 0.1, 0.5, 3, 11]) child.observe(value)

    expect(registry.render()).toBe(
      [
        '# HELP app:requests_total Requests served.',
        '# TYPE app:requests_total counter',
        'app:requests_total{code="200",path="/v1"} 3.5',
        'app:requests_total{code="500",path="/v1"} 0.0',
        '# HELP app:requests_created Requests served.',
        '# TYPE app:requests_created gauge',
        'app:requests_created{code="200",path="/v1"} 1.7000000005e+09',
        'app:requests_created{code="500",path="/v1"} 1.7000000015e+09',
        '# HELP app:temperature Line one\\nback\\\\slash',
        '# TYPE app:temperature gauge',
        'app:temperature -1.5',
        '# HELP app:latency_seconds Latency.',
        '# TYPE app:latency_seconds histogram',
        'app:latency_seconds_bucket{le="0.1",zone="a\\"b\\\\c\\nd"} 2.0',
        'app:latency_seconds_bucket{le="1.0",zone="a\\"b\\\\c\\nd"} 3.0',
        'app:latency_seconds_bucket{le="10.0",zone="a\\"b\\\\c\\nd"} 4.0',
        'app:latency_seconds_bucket{le="+Inf",zone="a\\"b\\\\c\\nd"} 5.0',
        'app:latency_seconds_count{zone="a\\"b\\\\c\\nd"} 5.0',
        'app:latency_seconds_sum{zone="a\\"b\\\\c\\nd"} 14.65',
        '# HELP app:latency_seconds_created Latency.',
        '# TYPE app:latency_seconds_created gauge',
        'app:latency_seconds_created{zone="a\\"b\\\\c\\nd"} 1.7000000015e+09',
        '# HELP app:empty No child yet.',
        '# TYPE app:empty gauge',
        '',
      ].join('\n'),
    )
  })

  it('returns the same child for the same labels in any order', () => {
    const registry = createPrometheusRegistry({ now: () => 0 })
    const family = registry.counter('c', 'c')
    family.labels({ a: '1', b: '2' }).inc(2)
    family.labels({ b: '2', a: '1' }).inc(3)
    expect(family.labels({ a: '1', b: '2' }).value()).toBe(5)
    expect(registry.render().match(/^c_total/gm)).toHaveLength(1)
  })

  it('re-renders only after a change', () => {
    const registry = createPrometheusRegistry({ now: () => 0 })
    const gauge = registry.gauge('g', 'g').labels({})
    const first = registry.render()
    expect(registry.render()).toBe(first)
    gauge.set(2)
    expect(registry.render()).toContain('g 2.0\n')
    registry.histogram('h', 'h', [1]).labels({}).observe(0.5)
    expect(registry.render()).toContain('h_bucket{le="1.0"} 1.0\n')
  })

  it('refuses what prometheus_client refuses', () => {
    const registry = createPrometheusRegistry({ now: () => 0 })
    expect(() => registry.counter('c', 'c').labels({}).inc(-1)).toThrow(KinfError)
    expect(() => registry.counter('bad-name', 'x')).toThrow(/invalid metric name/)
    expect(() => registry.gauge('g', 'g').labels({ le: '1' })).toThrow(/invalid label name/)
    expect(() => registry.gauge('g2', 'g').labels({ '0a': '1' })).toThrow(/invalid label name/)
    expect(() => registry.histogram('h', 'h', [2, 1])).toThrow(/ascending/)
    expect(() => registry.histogram('h2', 'h', [])).toThrow(/ascending/)
    expect(() => registry.histogram('h3', 'h', [1]).labels({}).observe(Number.NaN)).toThrow(/NaN/)
  })
})
