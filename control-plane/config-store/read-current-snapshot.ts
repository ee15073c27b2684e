import type { Redis } from 'ioredis'
import type { z } from 'zod'
import { verifySnapshot } from '../../shared/config/compile-snapshot.ts'
import { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { ConfigStoreKeys } from './config-store-keys.ts'
import { readCurrentLua } from './config-store-lua.ts'
import { PublishedVersion, type SnapshotRead } from './published-snapshot.ts'

/** What `config:current` says when it is not newer than what the caller knows. */
export type CurrentRead = SnapshotRead | { ok: 'unchanged'; current: PublishedVersion } | null

/**
 * The current snapshot, verified; null when nothing was published. With `knownVersion`,
 * a current version not above it is answered without reading its snapshot. Redis
 * failures throw (KinfError upstream_unavailable); bad stored data is a value. `schema`
 * is the snapshot's under the reader's plugins (snapshotSchemaOf), the built-in one's by default.
 */
export async function readCurrentSnapshot(
  redis: Redis,
  keys: ConfigStoreKeys,
  knownVersion = 0,
  schema: z.ZodType<ConfigSnapshot> = ConfigSnapshot,
): Promise<CurrentRead> {
  let reply: unknown
  try {
    reply = await redis.eval(readCurrentLua, 0, keys.prefix, String(knownVersion))
  } catch (error) {
    throw redisUnavailable('reading config:current', error)
  }
  if (!Array.isArray(reply)) return null
  const [pointerText, snapshotText] = reply as [string, string | null | undefined]
  const pointer = parsePointer(pointerText)
  if (!pointer.ok) return pointer
  if (snapshotText === undefined) return { ok: 'unchanged', current: pointer.current }
  return checkStoredSnapshot(pointer.current, snapshotText, schema)
}

/** A stored snapshot checked against the entry it was published under. */
export async function checkStoredSnapshot(
  entry: PublishedVersion,
  text: string | null,
  schema: z.ZodType<ConfigSnapshot> = ConfigSnapshot,
): Promise<SnapshotRead> {
  const refuse = (why: string): SnapshotRead => ({
    ok: false,
    version: entry.version,
    error: new KinfError('invalid_config', `config version ${entry.version}: ${why}`),
  })
  if (text === null) return refuse('its snapshot is missing from redis')
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return refuse('the stored snapshot is not JSON')
  }
  try {
    const snapshot = await verifySnapshot(json, schema)
    if (snapshot.hash !== entry.hash)
      return refuse(`the stored snapshot is ${snapshot.hash}, but ${entry.hash} was published`)
    return { ok: true, published: { ...entry, snapshot } }
  } catch (error) {
    return refuse(error instanceof Error ? error.message : String(error))
  }
}

/** A `config:current` value or `config:versions` member. */
export function parsePointer(
  text: string,
): { ok: true; current: PublishedVersion } | { ok: false; version: null; error: KinfError } {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  const parsed = PublishedVersion.safeParse(json)
  if (parsed.success) return { ok: true, current: parsed.data }
  return {
    ok: false,
    version: null,
    error: new KinfError('invalid_config', 'config:current is not {version, hash, publishedAt}'),
  }
}

export function redisUnavailable(operation: string, error: unknown): KinfError {
  if (KinfError.isInstance(error)) return error
  const message = error instanceof Error ? error.message : String(error)
  return new KinfError('upstream_unavailable', `config store: ${operation}: ${message}`, {
    cause: error,
  })
}
