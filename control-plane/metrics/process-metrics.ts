import { collectDefaultMetrics, Registry } from 'prom-client'

/**
 * prom-client's default metrics of this Node process (CPU, resident and heap memory, event
 * loop lag, GC, handles, open file descriptors, Node's version), collected on a registry
 * of their own: once per process, whichever services it runs (`npm start` runs the edge
 * and the scorer in one), since they describe the process and prom-client's collectors
 * (event-loop delay, GC observers) are process-wide.
 */
let registry: Registry | undefined

/**
 * Starts collecting, if nothing did yet: when a metrics listener starts, so that the
 * observers (GC, event-loop delay) see the process from then on, not from the first scrape.
 */
export function collectProcessMetrics(): Registry {
  if (registry === undefined) {
    registry = new Registry()
    collectDefaultMetrics({ register: registry })
  }
  return registry
}

/**
 * The process metrics in Prometheus' text format 0.0.4, read now. prom-client exposes some
 * gauges under names that end in `_total` (nodejs_active_handles_total and its siblings),
 * which `promtool check metrics` refuses ("non-counter metrics should not have _total
 * suffix"): those families are left out; their per-type gauges (nodejs_active_handles
 * {type}) say the same, summed.
 */
export async function renderProcessMetrics(): Promise<string> {
  return withoutMisnamedGauges(await collectProcessMetrics().metrics())
}

/** The exposition without the families whose TYPE is not counter and whose name ends in _total. */
export function withoutMisnamedGauges(text: string): string {
  const kept: string[] = []
  let keep = true
  for (const line of text.split('\n')) {
    if (line.startsWith('# HELP ')) keep = true
    const type = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (type?.[1]?.endsWith('_total') && type[2] !== 'counter') {
      keep = false
      // Its HELP line went in already: take it back.
      if (kept.at(-1)?.startsWith(`# HELP ${type[1]} `)) kept.pop()
    }
    if (keep && line !== '') kept.push(line)
  }
  return kept.length === 0 ? '' : `${kept.join('\n')}\n`
}
