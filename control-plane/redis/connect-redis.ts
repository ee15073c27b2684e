import { Redis } from 'ioredis'
import { KinfError } from '../../shared/errors/kinf-error.ts'

export interface ConnectRedisOptions {
  /**
   * A command without a reply after this long is rejected: a Redis that accepts the
   * connection but does not answer would otherwise hold every caller (none: no limit).
   */
  commandTimeoutMs?: number
}

/** Reconnection attempts back off to this at most, so a Redis that returns is used soon. */
const maxReconnectDelayMs = 500

/**
 * A client that fails fast: no offline queue, one retry, so a Redis outage is an error
 * now rather than a request hanging. `what` names the user in the error.
 */
export async function connectRedis(
  url: string,
  what: string,
  options: ConnectRedisOptions = {},
): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    // ioredis's default caps at 2 s: up to 2 s of outage more than Redis's own.
    retryStrategy: (attempt) => Math.min(attempt * 50, maxReconnectDelayMs),
    ...(options.commandTimeoutMs === undefined ? {} : { commandTimeout: options.commandTimeoutMs }),
  })
  // Failures reach callers as rejected commands; without a listener ioredis also logs each.
  // The socket's own error (ECONNREFUSED…) says more than connect()'s "Connection is closed".
  let socketError: Error | null = null
  redis.on('error', (error: Error) => {
    socketError ??= error
  })
  try {
    await redis.connect()
    return redis
  } catch (error) {
    redis.disconnect()
    const reason = (socketError ?? error) as Error
    throw new KinfError(
      'upstream_unavailable',
      `${what}: connecting: ${reason instanceof Error ? reason.message : String(reason)}`,
      { cause: error },
    )
  }
}
