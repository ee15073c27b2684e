import { gpuProfiles } from '../../../shared/gpu/gpu-profile.ts'
import type { ChatFrame } from './chat-prompt-ids.ts'
import { parseDataSpec } from './data-spec.ts'
import type { BenchmarkRun } from './request-record.ts'
import { isTraceData } from './trace/load-mooncake-trace.ts'

/** How often a fan-out run computed each burst's shared prefix. */
export interface FanOutPrefills {
  /** Bursts with at least one answered sibling. */
  prefixes: number
  /**
   * Prefills per prefix, averaged over prefixes: a sibling prefilled its burst's prefix
   * when its pod reported fewer cached tokens than the prefix's whole blocks (two
   * siblings on one pod both count when neither found the other's blocks). 1.0 means
   * every prefix was computed exactly once.
   */
  duplicatePrefillRatio: number
  /** Distinct pods that prefilled each prefix, averaged over prefixes. */
  prefillingPods: number
}

/**
 * The duplicate-prefill ratio of a fan-out run (data with fan_out), from its records:
 * first turns only, failed requests left out. The prefix is the system message as the
 * chat template frames it (`frame`), in whole blocks of the run's GPU profile (vLLM
 * caches whole blocks only). null for a run without fan-out.
 */
export function fanOutPrefills(run: BenchmarkRun, frame: ChatFrame): FanOutPrefills | null {
  if (isTraceData(run.config.dataSpec)) return null
  const fanOut = parseDataSpec(run.config.dataSpec).fanOut
  if (!fanOut) return null
  const block = gpuProfiles[run.config.gpuProfile]?.blockSize ?? 16
  const prefixTokens = frame.open.system.length + fanOut.prefixTokens + frame.close.length
  const whole = Math.floor(prefixTokens / block) * block
  const bursts = new Map<number, { prefills: number; pods: Set<string> }>()
  for (const record of run.records) {
    if (record.error !== null || record.turn !== 0) continue
    const burst = Math.floor(record.conversation / fanOut.size)
    let entry = bursts.get(burst)
    if (!entry) {
      entry = { prefills: 0, pods: new Set() }
      bursts.set(burst, entry)
    }
    if (record.cachedTokens < whole) {
      entry.prefills++
      entry.pods.add(record.pod ?? `unknown-${record.id}`)
    }
  }
  const entries = [...bursts.values()]
  const mean = (pick: (entry: (typeof entries)[number]) => number) =>
    entries.length === 0 ? 0 : entries.reduce((sum, entry) => sum + pick(entry), 0) / entries.length
  return {
    prefixes: entries.length,
    duplicatePrefillRatio: mean((entry) => entry.prefills),
    prefillingPods: mean((entry) => entry.pods.size),
  }
}
