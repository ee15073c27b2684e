import type { StateStore } from '../../../../shared/state/state-store.ts'
import { parsePrometheusText } from '../../../metrics/parse-prometheus-text.ts'
import type { RequestOutcome } from '../chaos-client.ts'
import type { ChaosPart } from '../chaos-parts.ts'

/** Cached over prompt tokens of the completed requests, as their usage reported them. */
export function hitRate(outcomes: readonly RequestOutcome[]): {
  requests: number
  rate: number | null
} {
  let cached = 0
  let prompt = 0
  let requests = 0
  for (const outcome of outcomes) {
    if (outcome.kind !== 'completed' || !outcome.promptTokens) continue
    requests++
    cached += outcome.cachedTokens ?? 0
    prompt += outcome.promptTokens
  }
  return { requests, rate: prompt === 0 ? null : cached / prompt }
}

export const percent = (rate: number | null) =>
  rate === null ? 'n/a' : `${(rate * 100).toFixed(1)} %`

/**
 * Pod → blocks the scorer's index holds for it, as the scorer's newest pod view written at
 * or after `sinceWallMs` says (read from Redis); null when there is none yet.
 */
export async function indexedBlocks(
  state: StateStore,
  sinceWallMs = 0,
): Promise<Map<string, number> | null> {
  const views = (await state.readPodViews(Date.now()))
    .filter((view) => view.writtenAtMs >= sinceWallMs)
    .sort((a, b) => b.writtenAtMs - a.writtenAtMs)
  const newest = views[0]
  if (!newest) return null
  return new Map(newest.pods.map((pod) => [pod.pod, pod.blocksIndexed ?? 0]))
}

/** Whether a view written since `sinceWallMs` shows every pod with at least its blocks of `before`. */
export async function indexedAgain(
  state: StateStore,
  before: ReadonlyMap<string, number>,
  sinceWallMs: number,
): Promise<boolean> {
  const now = await indexedBlocks(state, sinceWallMs)
  if (now === null) return false
  return [...before].every(([pod, blocks]) => (now.get(pod) ?? 0) >= blocks)
}

/** The scorer logged decisions at or after `wallMs` (read from Redis). */
export async function decisionsLoggedSince(state: StateStore, wallMs: number): Promise<boolean> {
  return (await state.readDecisions({ sinceMs: wallMs, count: 1 })).length > 0
}

/** A counter's total over its labels on a part's /metrics (0 when absent). */
export async function counterTotal(part: ChaosPart, name: string): Promise<number> {
  const response = await fetch(`${part.metricsUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })
  return parsePrometheusText(await response.text())
    .samples.filter((sample) => sample.name === name)
    .reduce((sum, sample) => sum + sample.value, 0)
}
