import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** How long a status page login lasts unless the caller says otherwise. */
export const defaultSessionTtlMs = 12 * 60 * 60 * 1000

/** What a cookie value is worth: a live session, one past its expiry, or nothing. */
export type SessionCheck =
  | { kind: 'valid'; expiresAtMs: number }
  | { kind: 'expired' }
  | { kind: 'invalid' }

export interface StatusPageSessions {
  /** A new session: the cookie's value and how long the browser should keep it. */
  issue(): { value: string; expiresAtMs: number; maxAgeSeconds: number }
  check(value: string | null): SessionCheck
}

const version = 'v1'
/** v1.<expiry, ms since the epoch in base 36>.<16 random bytes>.<HMAC-SHA256>, base64url. */
const shape = /^v1\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/

/**
 * Status page sessions that need no table: a session is its expiry and a random id, signed
 * with HMAC-SHA256 under a key derived from the admin token. So every scorer replica that
 * shares the token accepts a session another one issued (a Service spreads a browser's
 * requests over them), rotating the token ends every session, and the cookie holds nothing
 * from which the token could be recovered. A session cannot be ended alone before its
 * expiry: the price of holding no state, and why the expiry is short.
 */
export function statusPageSessions(
  adminToken: string,
  options: {
    nowMs: () => number
    ttlMs?: number
    /** Where the session ids come from (node:crypto's randomBytes unless a test says). */
    random?: (bytes: number) => Uint8Array
  },
): StatusPageSessions {
  const ttlMs = options.ttlMs ?? defaultSessionTtlMs
  const random = options.random ?? randomBytes
  // A key of its own, so a cookie's MAC is never a MAC the admin token made elsewhere.
  const key = createHmac('sha256', adminToken).update('kinference status page session').digest()
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest()
  return {
    issue() {
      const expiresAtMs = Math.floor(options.nowMs()) + ttlMs
      const id = Buffer.from(random(16)).toString('base64url')
      const payload = `${version}.${expiresAtMs.toString(36)}.${id}`
      return {
        value: `${payload}.${sign(payload).toString('base64url')}`,
        expiresAtMs,
        maxAgeSeconds: Math.floor(ttlMs / 1000),
      }
    },
    check(value) {
      const parts = value === null ? null : shape.exec(value)
      if (parts === null) return { kind: 'invalid' }
      const [, expiry = '', id = '', mac = ''] = parts
      const given = Buffer.from(mac, 'base64url')
      const wanted = sign(`${version}.${expiry}.${id}`)
      // The last of a 32-byte MAC's 43 characters carries 2 unused bits: only the canonical
      // spelling is the one we issued, so another spelling of the same bytes is refused too.
      const canonical = given.toString('base64url') === mac
      if (!canonical || given.length !== wanted.length || !timingSafeEqual(given, wanted))
        return { kind: 'invalid' }
      const expiresAtMs = Number.parseInt(expiry, 36)
      if (options.nowMs() >= expiresAtMs) return { kind: 'expired' }
      return { kind: 'valid', expiresAtMs }
    },
  }
}
