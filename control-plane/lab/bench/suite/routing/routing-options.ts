import type { SimModelAssets } from '../../../sim/sim-model-assets.ts'
import type { BenchPreset } from '../../bench-presets.ts'
import type { DesTimingOptionsInput } from '../../des/des-timing-options.ts'
import type { CapacityOutcome } from '../targets/scenario-runs.ts'
import type { TargetCheck } from '../targets/target-verdict.ts'
import type { WorkloadCapacity } from './rate-grid-targets.ts'

export interface RoutingOptions {
  seeds: readonly number[]
  routers: readonly string[]
  /** --pods: every workload's pool; null: each preset's own, else the default. */
  pods: number | null
  threads: number
  assets: SimModelAssets
  /** Multiplies every run's request count (capacity runs' steady-state length too). */
  requestScale: number
  /** The prefix workloads judged (default `routingWorkloads`). */
  workloads?: readonly string[]
  desTiming?: DesTimingOptionsInput
  log?: (line: string) => void
}

/** One prefix workload: capacity per router and seed, the grid built on it, its targets. */
export interface WorkloadResult {
  preset: BenchPreset
  pods: number
  outcomes: CapacityOutcome[]
  capacity: WorkloadCapacity | null
  sections: string[]
  targets: TargetCheck[]
}
