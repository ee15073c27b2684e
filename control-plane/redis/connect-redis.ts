import { Redis } from 'ioredis'
import { KinfError } from '../../shared/errors/kinf-error.ts'

/**
 * A client that fails fast: no offline queue, one retry, so a Redis outage is an error
 * now rather than a request hanging. `what` names the user in the error.
 */
export async function connectRedis(url: string, what: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
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
