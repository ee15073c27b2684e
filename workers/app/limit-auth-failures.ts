import type { Context } from 'hono'
import { AuthFailureLimiter } from '../../shared/auth/auth-failure-limiter.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { parseApiKey } from '../../shared/tenancy/api-key.ts'
import { authenticate } from './read-edge-request.ts'

/** Sources this edge tracks at once (addresses and key ids); older windows are dropped. */
const maxTracked = 50_000

/**
 * `authenticate`, with repeated failures refused: an address past the limit gets 429s
 * before its key is even looked at; a key id past it gets a 429 instead of each further
 * 401 (its right secret still works, so guessing cannot lock its owner out). Counts are
 * per edge process or Worker isolate.
 */
export function limitedAuthentication(options: {
  perMinute: number
  nowMs: () => number
  clientAddress: (c: Context) => string | null
}) {
  const limiter = new AuthFailureLimiter({
    maxFailures: options.perMinute,
    windowMs: 60_000,
    maxTracked,
  })
  return async (c: Context, snapshot: ConfigSnapshot) => {
    const address = options.clientAddress(c)
    const header = c.req.header('authorization')
    const now = options.nowMs()
    const waiting = address ? limiter.blocked(`address:${address}`, now) : null
    if (waiting !== null) throw tooManyFailures(waiting)
    try {
      return await authenticate(snapshot, header)
    } catch (error) {
      if (!KinfError.isInstance(error) || error.code !== 'unauthorized') throw error
      // Worked out on failure only: a served request pays for nothing but the check above.
      const sources = [
        ...(address ? [`address:${address}`] : []),
        ...keyIdOf(header).map((id) => `key:${id}`),
      ]
      const waits = sources.flatMap((source) => limiter.failed(source, now) ?? [])
      if (waits.length > 0) throw tooManyFailures(Math.max(...waits))
      throw error
    }
  }
}

function keyIdOf(header: string | undefined): string[] {
  const raw = header?.startsWith('Bearer ') ? header.slice(7).trim() : ''
  const key = parseApiKey(raw)
  return key ? [key.id] : []
}

function tooManyFailures(retryAfterSeconds: number): KinfError {
  return new KinfError(
    'rate_limited',
    `Too many failed authentications; retry in ${retryAfterSeconds} s.`,
    { retryAfterSeconds, openAiCode: 'rate_limit_exceeded' },
  )
}
