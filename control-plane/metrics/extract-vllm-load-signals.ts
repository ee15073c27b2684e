import { z } from 'zod'
import { anyModel } from '../../shared/routing/pool-router.ts'
import type { PrometheusSample } from './prometheus-sample.ts'

/** What a router reads from one vLLM pod's `/metrics` for one model; null when absent. */
export const VllmLoadSignals = z.strictObject({
  /** Requests in model execution batches (summed over engines). */
  running: z.number().min(0).nullable(),
  /** Requests waiting to be scheduled (summed over engines). */
  waiting: z.number().min(0).nullable(),
  /** KV-cache usage, 1 meaning full (the mean over engines). */
  kvCacheUsage: z.number().nullable(),
  /** Cumulative prefix-cache queries and hits, in tokens (summed over engines). */
  prefixCacheQueries: z.number().min(0).nullable(),
  prefixCacheHits: z.number().min(0).nullable(),
  /** From `vllm:cache_config_info`: blocks summed over engines, block size when they agree. */
  numGpuBlocks: z.number().int().min(0).nullable(),
  blockSize: z.number().int().min(1).nullable(),
  /** The `engine` label values read, sorted; '' stands for series without one. */
  engines: z.array(z.string()),
  /** Deprecated metric names read because the current ones were missing. */
  deprecatedNames: z.array(z.string()),
})
export type VllmLoadSignals = z.infer<typeof VllmLoadSignals>

export interface ExtractVllmLoadSignalsOptions {
  /** Read one data-parallel engine only (series without an `engine` label still count). */
  engine?: string
}

type Signal = 'running' | 'waiting' | 'kvCacheUsage' | 'prefixCacheQueries' | 'prefixCacheHits'

/** Per signal, the names to read in order: the current one, then the deprecated ones. */
const signalNames: Record<Signal, readonly string[]> = {
  running: ['vllm:num_requests_running'],
  waiting: ['vllm:num_requests_waiting'],
  kvCacheUsage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'],
  prefixCacheQueries: ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total'],
  prefixCacheHits: ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total'],
}
const wanted = new Set(Object.values(signalNames).flat())
const cacheConfigInfo = 'vllm:cache_config_info'

/**
 * Reduces a scrape to the load signals of `modelName`. Series of other models are ignored
 * (`vllm:cache_config_info` has no `model_name`: it is the pod's). For each signal the
 * current name is read and, only when it is absent, the deprecated one
 * (`vllm:gpu_cache_usage_perc`, `vllm:gpu_prefix_cache_{queries,hits}_total`). The first
 * sample per name and engine wins; NaN and infinite values count as absent, and so does a
 * total over engines that overflows (past the largest double, or blocks past 2^53).
 */
export function extractVllmLoadSignals(
  samples: readonly PrometheusSample[],
  modelName: string,
  options: ExtractVllmLoadSignalsOptions = {},
): VllmLoadSignals {
  const byName = new Map<string, Map<string, number>>()
  const cacheConfigs = new Map<string, Readonly<Record<string, string>>>()
  const ofEngine = (sample: PrometheusSample) => {
    const engine = sample.labels.engine
    return options.engine === undefined || engine === undefined || engine === options.engine
  }
  for (const sample of samples) {
    if (sample.name === cacheConfigInfo) {
      const engine = sample.labels.engine ?? ''
      if (ofEngine(sample) && !cacheConfigs.has(engine)) cacheConfigs.set(engine, sample.labels)
      continue
    }
    if (!wanted.has(sample.name)) continue
    if (modelName !== anyModel && sample.labels.model_name !== modelName) continue
    if (!ofEngine(sample) || !Number.isFinite(sample.value)) continue
    const engines = byName.get(sample.name) ?? new Map<string, number>()
    byName.set(sample.name, engines)
    const engine = sample.labels.engine ?? ''
    if (!engines.has(engine)) engines.set(engine, sample.value)
  }

  const engines = new Set<string>(cacheConfigs.keys())
  const deprecatedNames: string[] = []
  const read = (signal: Signal, combine: (values: number[]) => number): number | null => {
    const names = signalNames[signal]
    const index = names.findIndex((name) => byName.has(name))
    const name = names[index]
    const values = name === undefined ? undefined : byName.get(name)
    if (name === undefined || values === undefined) return null
    if (index > 0) deprecatedNames.push(name)
    for (const engine of values.keys()) engines.add(engine)
    const combined = combine([...values.values()])
    // Finite values can still sum past the largest double: no reading either.
    return Number.isFinite(combined) ? combined : null
  }
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)
  const nonNegative = (value: number | null) => (value === null || value < 0 ? null : value)

  const running = nonNegative(read('running', sum))
  const waiting = nonNegative(read('waiting', sum))
  const kvCacheUsage = read('kvCacheUsage', (values) => sum(values) / values.length)
  const prefixCacheQueries = nonNegative(read('prefixCacheQueries', sum))
  const prefixCacheHits = nonNegative(read('prefixCacheHits', sum))

  const configs = [...cacheConfigs.values()]
  const blocks = configs.map((labels) => wholeNumber(labels.num_gpu_blocks))
  const blockSizes = configs.map((labels) => wholeNumber(labels.block_size))
  const firstBlockSize = blockSizes[0] ?? null
  return {
    running,
    waiting,
    kvCacheUsage,
    prefixCacheQueries,
    prefixCacheHits,
    numGpuBlocks: wholeSum(blocks),
    blockSize:
      firstBlockSize !== null && firstBlockSize > 0 && blockSizes.every((v) => v === firstBlockSize)
        ? firstBlockSize
        : null,
    engines: [...engines].sort(),
    deprecatedNames,
  }
}

/** The total of every engine's blocks; null when one is unknown or the total is not exact. */
function wholeSum(blocks: readonly (number | null)[]): number | null {
  if (blocks.length === 0 || blocks.some((value) => value === null)) return null
  const total = (blocks as number[]).reduce((sum, value) => sum + value, 0)
  return Number.isSafeInteger(total) ? total : null
}

/** A label value that is a whole number as Python prints one ("16"), else null ("None"). */
function wholeNumber(text: string | undefined): number | null {
  if (text === undefined || !/^\d{1,15}$/.test(text)) return null
  return Number(text)
}
