/**
 * The max-score picker of GIE and llm-d (GIE `P/scheduling/picker/max_score_picker.go`): it
 * shuffles the candidates, then sorts them by score, so ties break uniformly at random. Returns
 * the index of the chosen score, -1 when there is none. Minimum pickers negate their costs.
 */
export function pickMaxScore(scores: readonly number[], random: () => number): number {
  const order = scores.map((_, index) => index)
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const swap = order[i] as number
    order[i] = order[j] as number
    order[j] = swap
  }
  let best = -1
  for (const index of order) {
    if (best === -1 || (scores[index] as number) > (scores[best] as number)) best = index
  }
  return best
}
