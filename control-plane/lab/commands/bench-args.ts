import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { type GpuProfile, gpuProfiles } from '../../../shared/gpu/gpu-profile.ts'
import { UsageError } from '../../kinfctl/cli-io.ts'
import { benchPoolSpec, benchRouterNames } from '../bench/bench-pool-spec.ts'
import { peakTtftSloMs } from '../bench/bench-presets.ts'
import type { DesAdmissionOptionsInput } from '../bench/des/des-admission.ts'
import type { DesTimingOptionsInput } from '../bench/des/des-timing-options.ts'
import { routingWorkloads } from '../bench/suite/routing/routing-workloads.ts'
import { isTraceData } from '../bench/trace/load-mooncake-trace.ts'

export const benchOptions = {
  suite: { type: 'string' },
  preset: { type: 'string' },
  data: { type: 'string' },
  name: { type: 'string', default: 'custom' },
  profile: { type: 'string' },
  rate: { type: 'string' },
  'max-requests': { type: 'string' },
  'trace-speed': { type: 'string' },
  'trace-offset': { type: 'string' },
  mode: { type: 'string', default: 'des' },
  target: { type: 'string' },
  'api-key': { type: 'string' },
  'time-scale': { type: 'string', default: '20' },
  routers: { type: 'string' },
  pods: { type: 'string' },
  'gpu-profile': { type: 'string' },
  seed: { type: 'string', default: '42' },
  seeds: { type: 'string' },
  replicas: { type: 'string' },
  'event-delay-ms': { type: 'string' },
  'metrics-interval-ms': { type: 'string' },
  'metrics-delay-ms': { type: 'string' },
  'event-loss-rate': { type: 'string' },
  'cpu-tier': { type: 'string' },
  admission: { type: 'string' },
  burst: { type: 'boolean', default: false },
  hold: { type: 'boolean', default: false },
  'pii-share': { type: 'string' },
  'request-scale': { type: 'string' },
  'slo-ms': { type: 'string', default: String(peakTtftSloMs) },
  out: { type: 'string', default: 'results/bench' },
  threads: { type: 'string' },
} as const

export type BenchValues = ReturnType<typeof parseArgs<{ options: typeof benchOptions }>>['values']

/** Everything `kinfctl bench` was asked, checked once. */
export interface BenchArgs {
  values: BenchValues
  suite: 'headline' | 'targets' | 'routing' | 'slo' | null
  mode: 'des' | 'live'
  /** --gpu-profile when given; else each preset's own or l40s-27b-fp8. */
  gpuProfile: GpuProfile | null
  /** --pods when given; else each preset's own or `defaultBenchPods`. */
  pods: number | null
  seeds: number[]
  replicas: number[]
  routers: string[]
  rates: number[] | undefined
  sloMs: number
  timeScale: number
  threads: number
  maxRequests: number | undefined
  traceOffset: number | undefined
  /** --cpu-tier: the pods' CPU tier as a multiple of their GPU's KV blocks (0: none). */
  cpuTier: number | undefined
  /** --admission (--burst, --pii-share): objectives and admission in DES runs; absent: none. */
  admission: DesAdmissionOptionsInput | undefined
  desTiming: DesTimingOptionsInput
  requestScale: number
  /** --suite routing --preset: the prefix workloads judged (default all of them). */
  routingWorkloads: string[] | undefined
  /** Live with --target: sent as `authorization: Bearer` (--api-key, else KINFERENCE_API_KEY). */
  apiKey: string | null
}

/** What `kinfctl bench` takes from its environment, read by the command and passed here. */
export interface BenchEnv {
  /** KINFERENCE_API_KEY: the key --api-key gives when it is not on the command line. */
  apiKey?: string | undefined
}

/** A KinfError from checking an argument is a usage mistake (exit 2), not a failed run. */
export function asUsage<T>(check: () => T): T {
  try {
    return check()
  } catch (error) {
    if (error instanceof KinfError) throw new UsageError(error.message)
    throw error
  }
}

export function positive(name: string, text: string, integer: boolean): number {
  const value = Number(text)
  if (
    text.trim() === '' ||
    !Number.isFinite(value) ||
    value <= 0 ||
    (integer && !Number.isInteger(value))
  )
    throw new UsageError(
      `--${name} must be a positive ${integer ? 'integer' : 'number'}, not "${text}"`,
    )
  return value
}

function nonNegative(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const value = Number(text)
  if (text.trim() === '' || !Number.isFinite(value) || value < 0)
    throw new UsageError(`--${name} must be a number of ms >= 0, not "${text}"`)
  return value
}

/** "4" or "4x": the CPU tier as a multiple of the GPU's KV blocks, at most 1,000. */
function cpuTierOf(text: string | undefined, mode: string): number | undefined {
  if (text === undefined) return undefined
  const value = Number(text.trim().replace(/x$/i, ''))
  if (text.trim() === '' || !(value >= 0 && value <= 1_000))
    throw new UsageError(
      `--cpu-tier must be a multiple of the GPU's KV blocks from 0 to 1000 (e.g. 4x), not "${text}"`,
    )
  if (mode !== 'des') throw new UsageError('--cpu-tier is a DES option')
  return value
}

/**
 * --admission own|none with --burst and --pii-share: every request carries the objective
 * --slo-ms; `own` lets kinference judge it and each peer apply its own admission.
 */
function admissionOf(values: BenchValues, mode: string): DesAdmissionOptionsInput | undefined {
  const gate = values.admission
  const share = fractionOf('pii-share', values['pii-share'])
  if (gate === undefined) {
    if (values.burst || values.hold || share !== undefined)
      throw new UsageError('--burst, --hold and --pii-share need --admission own|none')
    return undefined
  }
  if (gate !== 'own' && gate !== 'none')
    throw new UsageError(`--admission must be own or none, not "${gate}"`)
  if (mode !== 'des') throw new UsageError('--admission is a DES option')
  return {
    gate,
    sloTtftMs: Math.round(positive('slo-ms', values['slo-ms'], false)),
    burst: values.burst,
    hold: values.hold,
    ...(share !== undefined ? { piiShare: share } : {}),
  }
}

function fractionOf(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const value = Number(text)
  if (text.trim() === '' || !(value >= 0 && value <= 1))
    throw new UsageError(`--${name} must be a fraction from 0 to 1, not "${text}"`)
  return value
}

const listOf = (text: string) =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)

function seedsOf(values: BenchValues, suite: BenchArgs['suite']): number[] {
  // The routing suite's seeds are held out from tuning, which uses the targets suite's.
  const text =
    values.seeds ??
    (suite === 'targets' ? '1,2,42' : suite === 'routing' || suite === 'slo' ? '7,11' : values.seed)
  const seeds = listOf(text).map((s) => Number(s))
  if (seeds.length === 0 || seeds.some((s) => !Number.isInteger(s)))
    throw new UsageError(
      values.seeds === undefined
        ? `--seed must be an integer, not "${text}"`
        : `--seeds must be a list of integers, not "${text}"`,
    )
  return [...new Set(seeds)]
}

function replicasOf(values: BenchValues, suite: BenchArgs['suite'], mode: string): number[] {
  const text = values.replicas ?? (suite === 'targets' ? '1,3' : '1')
  const list = listOf(text).map((r) => positive('replicas', r, true))
  if (list.some((r) => r > 16)) throw new UsageError('--replicas must be at most 16')
  if (mode !== 'des' && list.some((r) => r !== 1))
    throw new UsageError('--replicas is a DES option (live runs one scorer)')
  return [...new Set(list)]
}

const suites = ['headline', 'targets', 'routing', 'slo'] as const

function suiteOf(values: BenchValues): BenchArgs['suite'] {
  // The routing suite takes --preset as the subset of its prefix workloads to judge.
  const preset = values.suite === 'routing' ? undefined : values.preset
  const sources = [values.suite, preset, values.data].filter((v) => v !== undefined)
  if (sources.length !== 1) throw new UsageError('give exactly one of --suite, --preset, --data')
  if (values.suite === undefined) return null
  const suite = suites.find((s) => s === values.suite)
  if (!suite) throw new UsageError(`unknown suite "${values.suite}" (known: ${suites.join(', ')})`)
  return suite
}

/** --trace-offset, which only a trace takes. */
function traceOffsetOf(text: string | undefined, data: string | undefined): number | undefined {
  if (text === undefined) return undefined
  if (data === undefined || !isTraceData(data))
    throw new UsageError('--trace-offset needs --data trace:FILE')
  const offset = Number(text)
  if (text.trim() === '' || !Number.isInteger(offset) || offset < 0)
    throw new UsageError(`--trace-offset must be a non-negative integer, not "${text}"`)
  return offset
}

/** --preset with --suite routing: the subset of its workloads to judge. */
function routingSubset(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined
  const names = listOf(text)
  const known: readonly string[] = routingWorkloads
  const unknown = names.filter((n) => !known.includes(n))
  if (names.length === 0 || unknown.length > 0)
    throw new UsageError(
      `--suite routing --preset takes its prefix workloads (${known.join(', ')}), not "${text}"`,
    )
  return names
}

/**
 * The key a live run against --target sends: --api-key, else the environment's. Without a
 * target the loopback stack asks for none, so only an explicit --api-key is a mistake there.
 */
function apiKeyOf(values: BenchValues, env: BenchEnv): string | null {
  const given = values['api-key']
  if (given !== undefined && values.target === undefined)
    throw new UsageError('--api-key needs --target (the loopback stack asks for no key)')
  if (given !== undefined && given.trim() === '') throw new UsageError('--api-key is empty')
  if (values.target === undefined) return null
  const key = given ?? env.apiKey
  return key === undefined || key.trim() === '' ? null : key.trim()
}

export function parseBenchArgs(args: string[], env: BenchEnv = {}): BenchArgs {
  const { values } = parseArgs({ args, options: benchOptions })
  const suite = suiteOf(values)
  const mode = values.mode
  if (mode !== 'des' && mode !== 'live') throw new UsageError('--mode must be des or live')
  if (values.target !== undefined && mode !== 'live')
    throw new UsageError('--target needs --mode live')
  if ((suite === 'targets' || suite === 'routing' || suite === 'slo') && mode !== 'des')
    throw new UsageError(`--suite ${suite} runs in des mode`)
  const name = values['gpu-profile']
  const gpuProfile = name === undefined ? null : (gpuProfiles[name] ?? null)
  if (name !== undefined && !gpuProfile) throw new UsageError(`unknown GPU profile "${name}"`)
  const pods = values.pods === undefined ? null : positive('pods', values.pods, true)
  if (pods !== null && pods > 1024) throw new UsageError('--pods must be at most 1024')
  const routers = listOf(values.routers ?? benchRouterNames.join(','))
  if (routers.length === 0) throw new UsageError('--routers names no router')
  // Against a --target the server routes; the names only label the runs.
  if (values.target === undefined)
    for (const router of routers) asUsage(() => benchPoolSpec(router, 'l40s-27b-fp8'))
  const timing = {
    eventDelayMs: nonNegative('event-delay-ms', values['event-delay-ms']),
    metricsDelayMs: nonNegative('metrics-delay-ms', values['metrics-delay-ms']),
    eventLossRate: fractionOf('event-loss-rate', values['event-loss-rate']),
    metricsIntervalMs:
      values['metrics-interval-ms'] === undefined
        ? undefined
        : positive('metrics-interval-ms', values['metrics-interval-ms'], false),
  }
  return {
    values,
    suite,
    mode,
    gpuProfile,
    pods,
    seeds: seedsOf(values, suite),
    replicas: replicasOf(values, suite, mode),
    routers,
    rates: values.rate?.split(',').map((r) => positive('rate', r, false)),
    sloMs: positive('slo-ms', values['slo-ms'], false),
    timeScale: positive('time-scale', values['time-scale'], false),
    threads:
      values.threads === undefined
        ? availableParallelism()
        : positive('threads', values.threads, true),
    maxRequests:
      values['max-requests'] === undefined
        ? undefined
        : positive('max-requests', values['max-requests'], true),
    traceOffset: traceOffsetOf(values['trace-offset'], values.data),
    cpuTier: cpuTierOf(values['cpu-tier'], mode),
    admission: admissionOf(values, mode),
    desTiming: Object.fromEntries(Object.entries(timing).filter(([, v]) => v !== undefined)),
    routingWorkloads: suite === 'routing' ? routingSubset(values.preset) : undefined,
    apiKey: apiKeyOf(values, env),
    requestScale:
      values['request-scale'] === undefined
        ? 1
        : positive('request-scale', values['request-scale'], false),
  }
}
