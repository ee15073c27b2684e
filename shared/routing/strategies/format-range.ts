/** "5" or "5–7": the spread of the values a chosen pod is compared with, for reasons. */
export function formatRange(values: readonly number[], digits = 0): string {
  const min = Math.min(...values)
  const max = Math.max(...values)
  const format = (value: number) => value.toFixed(digits)
  return min === max ? format(min) : `${format(min)}–${format(max)}`
}
