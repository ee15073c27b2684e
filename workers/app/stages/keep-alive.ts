import type { Context } from 'hono'

/** Work that must finish after the response: Workers' waitUntil; Node runs it anyway. */
export function keepAlive(c: Context, work: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(work)
  } catch {
    // No ExecutionContext outside Workers: the promise completes on its own.
  }
}
