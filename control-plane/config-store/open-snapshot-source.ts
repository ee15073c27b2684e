import { readFile, stat } from 'node:fs/promises'
import { z } from 'zod'
import { verifySnapshot } from '../../shared/config/compile-snapshot.ts'
import { parseOptions } from '../../shared/config/parse-options.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { followRedisSnapshots } from './follow-redis-snapshots.ts'
import type { PublishedSnapshot } from './published-snapshot.ts'
import { type SnapshotFeed, staticSnapshotFeed } from './snapshot-feed.ts'

const fn = <T>() => z.custom<T>((value) => typeof value === 'function', 'must be a function')

export const SnapshotSourceOptions = z.strictObject({
  prefix: z.string().default('kinf:').describe('Key prefix of the snapshot store in Redis'),
  pollMs: z.int().positive().default(5_000).describe('Safety-net poll of Redis, in ms'),
  log: fn<(line: string) => void>()
    .default(() => () => {})
    .describe('What the Redis follower reports'),
})
export type SnapshotSourceOptionsInput = z.input<typeof SnapshotSourceOptions>

export interface SnapshotSource {
  /** The snapshot to start with. */
  initial: PublishedSnapshot
  /** It and, from Redis, each newer one. */
  feed: SnapshotFeed
  /** Where it comes from, for logs: a path, or the URL without its password. */
  origin: string
}

/**
 * The config of a `--config` flag: `redis://…` or `rediss://…` follows the snapshot store
 * there; anything else is a snapshot file from `kinfctl compile`, read once (version 0).
 * Either way there is a verified snapshot to start with, or a KinfError saying why not.
 */
export async function openSnapshotSource(
  value: string,
  input: SnapshotSourceOptionsInput = {},
): Promise<SnapshotSource> {
  const options = parseOptions(SnapshotSourceOptions, input, 'config source')
  if (!/^rediss?:\/\//.test(value)) return readSnapshotFile(value)
  const origin = redactUrl(value)
  let lastLine = ''
  const follower = followRedisSnapshots({
    redis: value,
    prefix: options.prefix,
    pollMs: options.pollMs,
    log: (line) => {
      lastLine = line
      options.log(line)
    },
  })
  const initial = await follower.ready
  if (initial !== null) return { initial, feed: follower, origin }
  await follower.close()
  throw new KinfError(
    'invalid_config',
    `no verified config snapshot in ${origin} under ${options.prefix}config:current` +
      (lastLine === '' ? ' (publish one first)' : `: ${lastLine}`),
  )
}

async function readSnapshotFile(path: string): Promise<SnapshotSource> {
  let text: string
  let publishedAt: number
  try {
    text = await readFile(path, 'utf8')
    publishedAt = Math.trunc((await stat(path)).mtimeMs)
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : error
    throw new KinfError('invalid_config', `config ${path}: ${messageOf(reason)}`, { cause: error })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new KinfError('invalid_config', `config ${path}: not JSON (kinfctl compile writes it)`)
  }
  const snapshot = await verifySnapshot(json).catch((error: unknown) => {
    throw new KinfError('invalid_config', `config ${path}: ${messageOf(error)}`, { cause: error })
  })
  const initial = { version: 0, hash: snapshot.hash, publishedAt, snapshot }
  return { initial, feed: staticSnapshotFeed(initial), origin: path }
}

function redactUrl(value: string): string {
  try {
    const url = new URL(value)
    if (url.password !== '') url.password = '***'
    return url.toString()
  } catch {
    return 'redis (an unparsable URL)'
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
