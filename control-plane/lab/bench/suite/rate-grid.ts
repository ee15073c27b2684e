import { gridFractions } from '../bench-presets.ts'
import type { ComputedBounds } from './workload-bounds.ts'

/** Two significant digits: rates a person can type back in. */
function round2(value: number): number {
  return Number(value.toPrecision(2))
}

/** The load a rate is run at: whole streams (at least 1) for a closed loop, else the rate. */
export function loadAt(profile: string, rate: number): number {
  return profile === 'concurrent' ? Math.max(1, Math.round(rate)) : rate
}

/**
 * The one grid rule (bench-presets.ts `gridFractions`): open loop, fractions of the fluid
 * bound's requests/s; closed loop, of the streams that carry that rate at the zero-queue
 * service time, in whole streams (at least 1); a trace, the speeds that replay it at
 * those rates. Duplicates after
 * rounding are dropped.
 */
export function rateGrid(profile: string, bounds: ComputedBounds): number[] {
  const scaled = gridFractions.map((fraction) => {
    if (profile === 'concurrent') return loadAt(profile, fraction * bounds.closedLoopStreams)
    const rate = fraction * bounds.fluid.requestsPerSecond
    if (profile === 'trace') return round2(rate / (bounds.traceRate ?? rate))
    return round2(rate)
  })
  return [...new Set(scaled)].sort((a, b) => a - b)
}
