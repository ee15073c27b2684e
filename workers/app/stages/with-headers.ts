import type { Context } from 'hono'

/**
 * Sets `headers` on the context's answer, where it has none of them already. An answer
 * whose headers cannot change (fetch's own) is copied with them.
 */
export function withHeaders(c: Context, headers: Record<string, string>): void {
  const missing = Object.entries(headers).filter(([name]) => !c.res.headers.has(name))
  if (missing.length === 0) return
  try {
    for (const [name, value] of missing) c.res.headers.set(name, value)
  } catch {
    const copy = new Headers(c.res.headers)
    for (const [name, value] of missing) copy.set(name, value)
    c.res = new Response(c.res.body, { status: c.res.status, headers: copy })
  }
}
