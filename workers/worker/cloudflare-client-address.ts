import type { Context } from 'hono'

/** The client's address on Workers: Cloudflare sets it for every request; a client cannot. */
export function cloudflareClientAddress(c: Context): string | null {
  return c.req.header('cf-connecting-ip') ?? null
}
