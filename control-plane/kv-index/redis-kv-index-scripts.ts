import type { Redis } from 'ioredis'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { type RedisKvIndexScript, redisKvIndexLua } from './redis-kv-index-lua.ts'

/** Runs the index's Lua scripts by SHA: one EVALSHA per call, arguments as one array. */
export interface RedisKvIndexScripts {
  run(script: RedisKvIndexScript, args: readonly string[]): Promise<unknown>
}

/** Wraps any Redis failure (connection, timeout, reply error) in the project's error. */
export function toUpstreamError(operation: string, error: unknown): KinfError {
  if (KinfError.isInstance(error)) return error
  const message = error instanceof Error ? error.message : String(error)
  return new KinfError('upstream_unavailable', `redis kv index: ${operation}: ${message}`, {
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
 */
export async function loadRedisKvIndexScripts(redis: Redis): Promise<RedisKvIndexScripts> {
  const shas = new Map<RedisKvIndexScript, string>()
  async function load(script: RedisKvIndexScript): Promise<string> {
    const sha = (await redis.script('LOAD', redisKvIndexLua[script])) as string
    shas.set(script, sha)
    return sha
  }
  try {
    for (const script of Object.keys(redisKvIndexLua) as RedisKvIndexScript[]) await load(script)
  } catch (error) {
    throw toUpstreamError('loading scripts', error)
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
        throw toUpstreamError(script, error)
      }
    },
  }
}
