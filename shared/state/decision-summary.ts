import type { Decision } from './decision-entry.ts'
import { isExternalDecision } from './external-strategy.ts'

export interface DecisionSummary {
  decisions: number
  ended: number
  completed: number
  /** |actual − predicted| TTFT over the decisions with both, in ms; null without any. */
  absoluteErrorMs: { p50: number; p90: number; p99: number } | null
  /** Of those, the median of (actual − predicted) / actual: > 0 means predictions too low. */
  medianRelativeError: number | null
  /** Prompt tokens the pods reported cached, over the prompt tokens of those requests. */
  hitRate: number | null
  /** Prompt tokens the index matched at decision, over all prompt tokens decided. */
  predictedHitRate: number | null
}

/**
 * The summary line of `kinfctl inspect decisions` and the status page. Its TTFT errors and
 * hit rates are the pods': an external provider's requests (nothing predicted or matched,
 * external-strategy.ts) count as decisions only.
 */
export function summarizeDecisions(decisions: readonly Decision[]): DecisionSummary {
  const ended = decisions.filter((d) => d.end !== null)
  const onPods = decisions.filter((d) => !isExternalDecision(d))
  const timed = ended.flatMap((d) =>
    d.end?.ttftMs === null || d.end === null || isExternalDecision(d)
      ? []
      : [{ actual: d.end.ttftMs, d }],
  )
  const errors = timed.map(({ actual, d }) => Math.abs(actual - d.predictedTtftMs))
  const relative = timed.map(({ actual, d }) => (actual - d.predictedTtftMs) / Math.max(1, actual))
  const reported = ended.filter(
    (d) =>
      d.end?.cachedTokens !== null && d.end?.cachedTokens !== undefined && !isExternalDecision(d),
  )
  const prompt = (list: readonly Decision[]) => list.reduce((n, d) => n + d.promptTokens, 0)
  const cached = reported.reduce((n, d) => n + (d.end?.cachedTokens ?? 0), 0)
  const matched = onPods.reduce((n, d) => n + d.matchedTokens, 0)
  return {
    decisions: decisions.length,
    ended: ended.length,
    completed: ended.filter((d) => d.end?.outcome === 'completed').length,
    absoluteErrorMs:
      errors.length === 0
        ? null
        : { p50: quantile(errors, 0.5), p90: quantile(errors, 0.9), p99: quantile(errors, 0.99) },
    medianRelativeError: relative.length === 0 ? null : quantile(relative, 0.5),
    hitRate: prompt(reported) === 0 ? null : cached / prompt(reported),
    predictedHitRate: prompt(onPods) === 0 ? null : matched / prompt(onPods),
  }
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
}
