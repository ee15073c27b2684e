import { parsePrometheusText } from '../../control-plane/metrics/parse-prometheus-text.ts'
import type { PrometheusMetricType } from '../../control-plane/metrics/prometheus-sample.ts'

/** What a series name is, as Prometheus stores what it scraped. */
export type SeriesKind = PrometheusMetricType | 'histogram bucket' | 'histogram sum or count'

/**
 * Every series name a scrape of these expositions gives Prometheus, with its kind: the
 * names of the samples present, and for each `# TYPE` family the names it stands for even
 * while it has no sample yet (a histogram's `_bucket`, `_sum`, `_count`; a summary's own
 * name, `_sum`, `_count`). Throws when an exposition does not parse.
 */
export function exposedMetricNames(texts: readonly string[]): Map<string, SeriesKind> {
  const names = new Map<string, SeriesKind>()
  for (const text of texts) {
    const parsed = parsePrometheusText(text)
    if (parsed.errorCount > 0) {
      throw new Error(`exposition does not parse: ${JSON.stringify(parsed.errors.slice(0, 3))}`)
    }
    for (const [family, type] of parsed.types) {
      if (type === 'histogram') {
        names.set(`${family}_bucket`, 'histogram bucket')
        names.set(`${family}_sum`, 'histogram sum or count')
        names.set(`${family}_count`, 'histogram sum or count')
      } else if (type === 'summary') {
        names.set(family, 'summary')
        names.set(`${family}_sum`, 'summary')
        names.set(`${family}_count`, 'summary')
      } else names.set(family, type)
    }
    for (const sample of parsed.samples) {
      if (!names.has(sample.name)) names.set(sample.name, 'untyped')
    }
  }
  return names
}

/** The label names each sampled series name carries, over all its samples. */
export function sampledLabels(texts: readonly string[]): Map<string, Set<string>> {
  const labels = new Map<string, Set<string>>()
  for (const text of texts) {
    for (const sample of parsePrometheusText(text).samples) {
      const names = labels.get(sample.name) ?? new Set<string>()
      for (const name of Object.keys(sample.labels)) names.add(name)
      labels.set(sample.name, names)
    }
  }
  return labels
}
