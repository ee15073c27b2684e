import type { Redis } from 'ioredis'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { type RedisKvIndexScript, redisKvIndexLua } from './redis-kv-index-lua.ts'

/** Runs a set of Lua scripts by SHA: one EVALSHA per call, arguments as one array. */
export interface RedisScripts<Name extends string> {
  run(script: Name, args: readonly string[]): Promise<unknown>
}

export type RedisKvIndexScripts = RedisScripts<RedisKvIndexScript>

/** Wraps any Redis failure (connection, timeout, reply error) in the project's error. */
export function toUpstreamError(
  operation: string,
  error: unknown,
  subject = 'redis kv index',
): KinfError {
  if (KinfError.isInstance(error)) return error
  const message = error instanceof Error ? error.message : String(error)
  return new KinfError('upstream_unavailable', `${subject}: ${operation}: ${message}`, {
    cause: error,
  })
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT')
}

/**
 * Loads every script once (SCRIPT LOAD) and runs them with EVALSHA. A Redis that lost its
 * script cache (restart, failover, SCRIPT FLUSH) answers NOSCRIPT: the script is loaded
 * again and the call repeated once, which is safe because a NOSCRIPT call ran nothing.
 * Failures are KinfError 'upstream_unavailable' naming `subject`.
 */
export async function loadRedisScripts<Name extends string>(
  redis: Redis,
  lua: Readonly<Record<Name, string>>,
  subject: string,
): Promise<RedisScripts<Name>> {
  const shas = new Map<Name, string>()
  async function load(script: Name): Promise<string> {
    const sha = (await redis.script('LOAD', lua[script])) as string
    shas.set(script, sha)
    return sha
  }
  try {
    for (const script of Object.keys(lua) as Name[]) await load(script)
  } catch (error) {
    throw toUpstreamError('loading scripts', error, subject)
  }
  return {
    async run(script, args) {
      try {
        try {
          return await redis.call('EVALSHA', [shas.get(script) as string, 0, ...args])
        } catch (error) {
          if (!isNoScript(error)) throw error
          return await redis.call('EVALSHA', [await load(script), 0, ...args])
        }
      } catch (error) {
        throw toUpstreamError(script, error, subject)
      }
    },
  }
}

/** The KvIndex's scripts (redis-kv-index-lua.ts). */
export function loadRedisKvIndexScripts(redis: Redis): Promise<RedisKvIndexScripts> {
  return loadRedisScripts(redis, redisKvIndexLua, 'redis kv index')
}
