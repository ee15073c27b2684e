/** Whether `labels` carry every pair of a matchLabels selector ({} selects everything). */
export function matchesLabels(
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  for (const [key, value] of Object.entries(selector)) if (labels?.[key] !== value) return false
  return true
}
