import { KinfError } from '../errors/kinf-error.ts'
import { floatToGoString } from './float-to-go-string.ts'

/** What `/metrics` answers with: Prometheus text format 0.0.4, as prometheus_client serves it. */
export const prometheusTextContentType = 'text/plain; version=0.0.4; charset=utf-8'

export type MetricLabels = Readonly<Record<string, string>>

export interface CounterChild {
  /** Adds a non-negative amount (1 by default), like prometheus_client's `Counter.inc`. */
  inc(amount?: number): void
  value(): number
}

export interface GaugeChild {
  set(value: number): void
  value(): number
}

export interface HistogramChild {
  observe(value: number): void
}

/** One metric with its label sets; `labels` returns the child, creating it on first use. */
export interface MetricFamily<Child> {
  labels(values: MetricLabels): Child
}

export interface PrometheusRegistry {
  counter(name: string, help: string): MetricFamily<CounterChild>
  gauge(name: string, help: string): MetricFamily<GaugeChild>
  histogram(name: string, help: string, buckets: readonly number[]): MetricFamily<HistogramChild>
  /** The exposition, rebuilt only when something changed since the last call. */
  render(): string
}

export interface PrometheusRegistryOptions {
  /** Wall-clock seconds, read when a counter or histogram child is created (`_created`). */
  now: () => number
}

interface Family {
  render(out: string[]): void
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/**
 * A small prometheus_client: counters, gauges and histograms rendered byte for byte as
 * `generate_latest` writes them. Families appear in creation order, each with its HELP and
 * TYPE even while it has no child; label names are sorted; a counter is exposed as
 * `<name>_total`; the `_created` samples of counters and histograms follow their family as
 * a gauge family `<name>_created`; a histogram gives cumulative `_bucket` lines ending with
 * `le="+Inf"`, then `_count`, then `_sum`. Every line except the values is built once, when
 * its child is created, so a scrape formats numbers and joins strings, nothing more.
 */
export function createPrometheusRegistry({ now }: PrometheusRegistryOptions): PrometheusRegistry {
  const families: Family[] = []
  let cached: string | undefined
  const changed = () => {
    cached = undefined
  }

  function family<Child extends object>(
    name: string,
    help: string,
    type: 'counter' | 'gauge' | 'histogram',
    makeChild: (labels: MetricLabels) => Child & { render(out: string[]): void; created?: string },
  ): MetricFamily<Child> {
    if (!metricName.test(name)) throw new KinfError('internal', `invalid metric name "${name}"`)
    const children = new Map<string, Child & { render(out: string[]): void; created?: string }>()
    const exposed = type === 'counter' ? `${name}_total` : name
    const header = `# HELP ${exposed} ${escapeHelp(help)}\n# TYPE ${exposed} ${type}\n`
    const createdHeader = `# HELP ${name}_created ${escapeHelp(help)}\n# TYPE ${name}_created gauge\n`
    families.push({
      render(out) {
        out.push(header)
        for (const child of children.values()) child.render(out)
        if (type === 'gauge' || children.size === 0) return
        out.push(createdHeader)
        for (const child of children.values()) if (child.created) out.push(child.created)
      },
    })
    changed()
    return {
      labels(values) {
        const key = labelString(values)
        let child = children.get(key)
        if (child === undefined) {
          child = makeChild(values)
          children.set(key, child)
          changed()
        }
        return child
      },
    }
  }

  const createdLine = (name: string, labels: MetricLabels) =>
    `${name}_created${labelString(labels)} ${floatToGoString(now())}\n`

  return {
    counter(name, help) {
      return family(name, help, 'counter', (labels) => {
        const prefix = `${name}_total${labelString(labels)} `
        let total = 0
        return {
          created: createdLine(name, labels),
          inc(amount = 1) {
            if (!(amount >= 0)) {
              throw new KinfError('internal', `${name}: counters only go up (got ${amount})`)
            }
            total += amount
            changed()
          },
          value: () => total,
          render: (out) => out.push(prefix, floatToGoString(total), '\n'),
        }
      })
    },

    gauge(name, help) {
      return family(name, help, 'gauge', (labels) => {
        const prefix = `${name}${labelString(labels)} `
        let current = 0
        return {
          set(value) {
            current = value
            changed()
          },
          value: () => current,
          render: (out) => out.push(prefix, floatToGoString(current), '\n'),
        }
      })
    },

    histogram(name, help, buckets) {
      const bounds = checkBuckets(name, buckets)
      return family(name, help, 'histogram', (labels) => {
        const bucketPrefixes = [...bounds, Number.POSITIVE_INFINITY].map(
          (bound) => `${name}_bucket${labelString(labels, floatToGoString(bound))} `,
        )
        const countPrefix = `${name}_count${labelString(labels)} `
        const sumPrefix = `${name}_sum${labelString(labels)} `
        const counts = new Float64Array(bounds.length + 1)
        let sum = 0
        return {
          created: createdLine(name, labels),
          observe(value) {
            if (Number.isNaN(value)) throw new KinfError('internal', `${name}: observed NaN`)
            const index = bucketIndex(bounds, value)
            counts[index] = (counts[index] ?? 0) + 1
            sum += value
            changed()
          },
          render(out) {
            let cumulative = 0
            for (let i = 0; i < counts.length; i++) {
              cumulative += counts[i] ?? 0
              out.push(bucketPrefixes[i] ?? '', floatToGoString(cumulative), '\n')
            }
            out.push(countPrefix, floatToGoString(cumulative), '\n')
            out.push(sumPrefix, floatToGoString(sum), '\n')
          },
        }
      })
    },

    render() {
      if (cached === undefined) {
        const out: string[] = []
        for (const entry of families) entry.render(out)
        cached = out.join('')
      }
      return cached
    },
  }
}

/** `{a="x",b="y"}` with names sorted and values escaped; `le` joins the sort when given. */
function labelString(labels: MetricLabels, le?: string): string {
  const entries = Object.entries(labels)
  for (const [name] of entries) {
    if (!labelName.test(name) || name === 'le') {
      throw new KinfError('internal', `invalid label name "${name}"`)
    }
  }
  if (le !== undefined) entries.push(['le', le])
  if (entries.length === 0) return ''
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',')}}`
}

function escapeLabelValue(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('"', '\\"')
}

function escapeHelp(help: string): string {
  return help.replaceAll('\\', '\\\\').replaceAll('\n', '\\n')
}

function checkBuckets(name: string, buckets: readonly number[]): number[] {
  const bounds = buckets.filter((bound) => bound !== Number.POSITIVE_INFINITY)
  const ascending = bounds.every((bound, i) => i === 0 || bound > (bounds[i - 1] ?? bound))
  if (bounds.length === 0 || !ascending || bounds.some(Number.isNaN)) {
    throw new KinfError('internal', `${name}: buckets must be one or more ascending bounds`)
  }
  return bounds
}

/** The first bucket whose bound is at least `value`, where prometheus_client's `observe` counts it. */
function bucketIndex(bounds: readonly number[], value: number): number {
  let low = 0
  let high = bounds.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((bounds[middle] ?? 0) < value) low = middle + 1
    else high = middle
  }
  return low
}
