import { type BenchPreset, benchPresets, defaultBenchPods } from '../../bench-presets.ts'

/**
 * The prefix workloads whose capacity and rate grid the routing suite judges: every open-loop
 * preset whose requests share prefixes. multi-turn is left out of the grid: its preset is a
 * closed loop, and open loop its Poisson rate would count conversations (five requests
 * each), not requests, so neither the fluid bound nor a capacity in requests/s would
 * describe it; it is judged at 80 streams instead (routing-scenarios.ts). fan-out is not a
 * workload of issue 25's list.
 */
export const routingWorkloads = [
  'shared-prefix',
  'mixed-tenants',
  'b2b',
  'prefix-heavy-3pods',
  'prefix-heavy-4pods',
  'prefix-heavy-6pods',
  'long-outputs',
  'prefix-buckets',
] as const

export function presetNamed(name: string): BenchPreset {
  const preset = benchPresets[name]
  if (!preset) throw new Error(`unknown preset ${name}`)
  return preset
}

/** A workload's pool: --pods when given, else the preset's own, else the default. */
export const podsOf = (preset: BenchPreset, pods: number | null): number =>
  pods ?? preset.pods ?? defaultBenchPods

/**
 * The workloads by pool size, in the order given, the default pool first (the suite's other
 * scenarios run there): one DES context per pool size, run one after the other.
 */
export function groupByPods(
  presets: readonly BenchPreset[],
  pods: number | null,
): Map<number, BenchPreset[]> {
  const groups = new Map<number, BenchPreset[]>([[pods ?? defaultBenchPods, []]])
  for (const preset of presets) {
    const size = podsOf(preset, pods)
    groups.set(size, [...(groups.get(size) ?? []), preset])
  }
  return groups
}
