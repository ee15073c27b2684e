import { readFile } from 'node:fs/promises'
import { type KinfctlProcess, startKinfctl } from '../../../../test/support/e2e/kinfctl-process.ts'
import { parsePrometheusText } from '../../../metrics/parse-prometheus-text.ts'

/** VmRSS and VmHWM (its peak) of a process, in bytes. */
export interface ProcessMemory {
  rssBytes: number
  peakRssBytes: number
}

/**
 * The controller's samples by name, summed over their labels, and by `name|label=value`
 * summed over the other labels.
 */
export type MetricTotals = Map<string, number>

export interface ControllerProcess {
  readonly pid: number
  /** Its /metrics server, once it printed that it runs. */
  readonly url: string
  readonly process: KinfctlProcess
  memory(): Promise<ProcessMemory>
  metrics(): Promise<MetricTotals>
  stop(): Promise<void>
}

export interface ControllerProcessOptions {
  kubeconfig: string
  redisUrl: string
  prefix: string
  namespace: string
  /** The controller's --debounce, as kinfctl reads it (e.g. 100ms, its default). */
  debounce: string
  /** NODE_OPTIONS of its process, e.g. --max-old-space-size=128 to tell garbage from a leak. */
  nodeOptions: string | null
}

/**
 * `kinfctl controller` in its own process, as a pod runs it, so its memory and CPU are
 * its own and not the benchmark's (the API server, follower and scorer live here).
 */
export async function startControllerProcess(
  options: ControllerProcessOptions,
): Promise<ControllerProcess> {
  const child = startKinfctl(
    'controller',
    [
      'controller',
      '--kubeconfig',
      options.kubeconfig,
      '--namespace',
      options.namespace,
      '--redis',
      options.redisUrl,
      '--redis-prefix',
      options.prefix,
      '--listen',
      '127.0.0.1:0',
      '--debounce',
      options.debounce,
    ],
    options.nodeOptions === null ? {} : { NODE_OPTIONS: options.nodeOptions },
  )
  const pid = child.child.pid
  if (pid === undefined) throw new Error('kinfctl controller did not start')
  const url = (await child.waitFor(/probes and metrics on (http\S+)/, 120_000))[1] as string
  return {
    pid,
    url,
    process: child,
    memory: () => processMemory(pid),
    async metrics() {
      const response = await fetch(`${url}/metrics`)
      return totalsOf(await response.text())
    },
    async stop() {
      await child.stop('SIGTERM')
    },
  }
}

export async function processMemory(pid: number): Promise<ProcessMemory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1])
  return { rssBytes: kb('VmRSS') * 1024, peakRssBytes: kb('VmHWM') * 1024 }
}

function totalsOf(text: string): MetricTotals {
  const totals: MetricTotals = new Map()
  const add = (key: string, value: number) => totals.set(key, (totals.get(key) ?? 0) + value)
  for (const sample of parsePrometheusText(text).samples) {
    // Buckets would double count; `_count` and `_sum` are what the benchmark reads.
    if (sample.name.endsWith('_bucket') || sample.name.endsWith('_created')) continue
    add(sample.name, sample.value)
    for (const [label, value] of Object.entries(sample.labels))
      add(`${sample.name}|${label}=${value}`, sample.value)
  }
  return totals
}

/** The values of one sample name by one label, e.g. reconciles by result. */
export function byLabel(totals: MetricTotals, name: string, label: string) {
  const out: Record<string, number> = {}
  const start = `${name}|${label}=`
  for (const [key, value] of totals) if (key.startsWith(start)) out[key.slice(start.length)] = value
  return out
}
