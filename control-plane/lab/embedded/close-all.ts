/**
 * Closes what was started, last first (the scorer before the pods it proxies to), on
 * shutdown and when start-up failed half way; one part failing to close stops no other.
 */
export async function closeAll(parts: readonly { close(): Promise<void> }[]): Promise<void> {
  for (const part of [...parts].reverse()) await part.close().catch(() => undefined)
}
