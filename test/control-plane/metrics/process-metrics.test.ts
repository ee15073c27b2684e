import { describe, expect, it } from 'vitest'
import { parsePrometheusText } from '../../../control-plane/metrics/parse-prometheus-text.ts'
import {
  renderProcessMetrics,
  withoutMisnamedGauges,
} from '../../../control-plane/metrics/process-metrics.ts'
import { startMetricsListener } from '../../../control-plane/metrics/start-metrics-listener.ts'
import { createPrometheusRegistry } from '../../../shared/metrics/create-prometheus-registry.ts'
import { runPromtool } from '../../support/promtool.ts'

/** Metric families of an exposition, by their TYPE lines. */
const typesOf = (text: string) =>
  new Map(
    [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => [name ?? '', type ?? '']),
  )

describe('the Node process metrics (prom-client)', () => {
  it('give CPU, memory, event-loop lag, GC and handles of this process', async () => {
    const types = typesOf(await renderProcessMetrics())
    expect(Object.fromEntries([...types].filter(([name]) => wanted.includes(name)))).toEqual({
      process_cpu_seconds_total: 'counter',
      process_resident_memory_bytes: 'gauge',
      nodejs_heap_size_used_bytes: 'gauge',
      nodejs_eventloop_lag_p99_seconds: 'gauge',
      nodejs_gc_duration_seconds: 'histogram',
      nodejs_active_handles: 'gauge',
    })
  })

  it('leave out the gauges prom-client names with _total, which promtool refuses', async () => {
    const text = await renderProcessMetrics()
    const misnamed = [...typesOf(text)].filter(
      ([name, type]) => name.endsWith('_total') && type !== 'counter',
    )
    expect(misnamed).toEqual([])
    expect(runPromtool(['check', 'metrics'], text)).toEqual({ status: 0, output: '' })
  })

  it('drops a misnamed family whole, HELP, TYPE and samples, and keeps the others', () => {
    const text = [
      '# HELP a_total Handles.',
      '# TYPE a_total gauge',
      'a_total 3',
      '',
      '# HELP b_total Seconds.',
      '# TYPE b_total counter',
      'b_total 1',
      '',
      '# HELP c Handles by type.',
      '# TYPE c gauge',
      'c{type="Timer"} 2',
      '',
    ].join('\n')
    expect(withoutMisnamedGauges(text)).toBe(
      '# HELP b_total Seconds.\n# TYPE b_total counter\nb_total 1\n# HELP c Handles by type.\n# TYPE c gauge\nc{type="Timer"} 2\n',
    )
  })

  it('follow the service’s own series on its metrics listener, one exposition promtool accepts', async () => {
    const registry = createPrometheusRegistry({ now: () => 1_700_000_000 })
    registry.counter('kinference_test_things', 'Things.').labels({ kind: 'a' }).inc()
    const listener = await startMetricsListener({
      name: 'test metrics',
      host: '127.0.0.1',
      port: 0,
      render: () => registry.render(),
    })
    try {
      const text = await (await fetch(`${listener.url}/metrics`)).text()
      expect(text.startsWith(registry.render())).toBe(true)
      const parsed = parsePrometheusText(text)
      expect(parsed.errors).toEqual([])
      const names = new Set(parsed.samples.map((sample) => sample.name))
      expect(names).toContain('kinference_test_things_total')
      expect(names).toContain('process_cpu_seconds_total')
      expect(runPromtool(['check', 'metrics'], text)).toEqual({ status: 0, output: '' })
    } finally {
      await listener.close()
    }
  })
})

const wanted = [
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_heap_size_used_bytes',
  'nodejs_eventloop_lag_p99_seconds',
  'nodejs_gc_duration_seconds',
  'nodejs_active_handles',
]
