import type { RequestOutcome } from './chaos-client.ts'

/** One property a scenario checks besides the request counts (e.g. the index dropped the pod). */
export interface ScenarioCheck {
  name: string
  ok: boolean
  detail: string
}

/** How long the system took to settle after the fault, against the scenario's target. */
export interface Convergence {
  what: string
  /** Null: it did not settle before the scenario gave up. */
  ms: number | null
  targetMs: number | null
}

export interface ScenarioResult {
  id: string
  title: string
  requests: number
  completed: number
  cleanErrors: number
  lost: number
  /** A few distinct reasons requests were lost, for the report. */
  lostWhy: string[]
  /** Clean errors by status and code, e.g. "503 saturated ×3". */
  errorKinds: string[]
  convergence: Convergence | null
  checks: ScenarioCheck[]
  /** Measured figures worth reporting (hit rates, latencies, memory). */
  notes: string[]
  durationMs: number
}

export type ScenarioBody = Omit<ScenarioResult, 'id' | 'title' | 'durationMs'>

/** The request counts of a scenario's outcomes. */
export function tallyOutcomes(outcomes: readonly RequestOutcome[]) {
  const lostWhy = new Set<string>()
  const errorKinds = new Map<string, number>()
  let completed = 0
  let cleanErrors = 0
  let lost = 0
  for (const outcome of outcomes) {
    if (outcome.kind === 'completed') completed++
    else if (outcome.kind === 'clean-error') {
      cleanErrors++
      const kind = `${outcome.status} ${outcome.code}`
      errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1)
    } else {
      lost++
      if (lostWhy.size < 5) lostWhy.add(outcome.why)
    }
  }
  return {
    requests: outcomes.length,
    completed,
    cleanErrors,
    lost,
    lostWhy: [...lostWhy],
    errorKinds: [...errorKinds].map(([kind, count]) => `${kind} ×${count}`),
  }
}

/** Whether a scenario met its targets: nothing lost, every check held, settled in time. */
export function scenarioPassed(result: ScenarioResult): boolean {
  const { convergence } = result
  const settled =
    convergence === null ||
    (convergence.ms !== null &&
      (convergence.targetMs === null || convergence.ms <= convergence.targetMs))
  return result.lost === 0 && result.checks.every((check) => check.ok) && settled
}

/** The p-th percentile (0-100) of some values, nearest rank; null when there are none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank] ?? null
}
