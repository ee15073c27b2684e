/** A duration flag as Kubernetes tools write them: 500ms, 15s, 2m, 1h (or plain ms). */
export function parseDuration(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim())
  if (!match) return null
  const scale = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[match[2] ?? 'ms'] ?? 1
  const value = Number(match[1]) * scale
  return Number.isFinite(value) ? Math.round(value) : null
}
