/** Counters the edge keeps, rendered in Prometheus' text format on Node. */
export interface EdgeMetrics {
  inc(name: EdgeCounter, labels?: Record<string, string>): void
  render(): string
}

export type EdgeCounter =
  | 'requests'
  | 'rejected'
  | 'quota_exceeded'
  | 'quota_fallback'
  | 'pii_detected'
  | 'pii_detector_failures'
  | 'pii_unreadable'
  | 'pii_kept_local'
  | 'scorer_unreachable'
  | 'burst'

const help: Record<EdgeCounter, string> = {
  requests: 'Requests answered, by outcome and upstream locality.',
  rejected: 'Requests refused by policy, by code.',
  quota_exceeded: 'Requests refused by a tenant quota, by limit.',
  quota_fallback:
    'Admissions while the quota store could not be reached, by failure mode: FailOpen admitted against the bucket of this edge process or isolate, FailClose refused with 503.',
  pii_detected: 'Requests the detectors labelled, by label.',
  pii_detector_failures: 'Detector failures (the request then counts as PII: fail closed).',
  pii_unreadable:
    'Requests with content the PII scan cannot read (images, binary data, over-deep or over-long encodings): they count as PII (fail closed).',
  pii_kept_local:
    'PII requests refused rather than sent outside the cluster (saturated, unreachable, or a detector failure).',
  scorer_unreachable: 'Times the scorer could not be reached.',
  burst:
    'Requests served by an external backend after the local pool was saturated or unreachable.',
}

export function createEdgeMetrics(): EdgeMetrics {
  const counts = new Map<string, number>()
  const key = (name: string, labels: Record<string, string>) => {
    const parts = Object.entries(labels)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, '_')}"`)
    return `kinference_edge_${name}_total${parts.length > 0 ? `{${parts.join(',')}}` : ''}`
  }
  return {
    inc(name, labels = {}) {
      const k = key(name, labels)
      counts.set(k, (counts.get(k) ?? 0) + 1)
    },
    render() {
      const lines: string[] = []
      for (const [name, text] of Object.entries(help)) {
        lines.push(`# HELP kinference_edge_${name}_total ${text}`)
        lines.push(`# TYPE kinference_edge_${name}_total counter`)
        for (const [k, v] of counts)
          if (k.startsWith(`kinference_edge_${name}_total`)) lines.push(`${k} ${v}`)
      }
      return `${lines.join('\n')}\n`
    },
  }
}
