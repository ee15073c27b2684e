import { followRedisSnapshots } from './follow-redis-snapshots.ts'
import { openSnapshotSource } from './open-snapshot-source.ts'
import type { PublishedSnapshot } from './published-snapshot.ts'
import type { SnapshotFeed } from './snapshot-feed.ts'

/** A `--config` source opened for a long-running process: its feed, first snapshot and origin. */
export interface ConfigFeed {
  feed: SnapshotFeed
  initial: PublishedSnapshot
  origin: string
}

/**
 * A snapshot file, read and verified once; or the store in Redis, followed. Until Redis
 * holds a verified snapshot (none published yet, refused, unreachable) this waits, so a
 * scorer or an edge may start before the controller; it resolves null if interrupted
 * meanwhile. `onSnapshot` sees every version from the first on, including the first.
 */
export async function openConfigFeed(options: {
  config: string
  prefix: string
  log: (line: string) => void
  interrupted: Promise<void>
  onSnapshot: (published: PublishedSnapshot) => void
}): Promise<ConfigFeed | null> {
  if (!/^rediss?:\/\//.test(options.config)) {
    const source = await openSnapshotSource(options.config)
    options.onSnapshot(source.initial)
    return source
  }
  const origin = withoutPassword(options.config)
  const follower = followRedisSnapshots({
    redis: options.config,
    prefix: options.prefix,
    log: options.log,
  })
  let arrived: (published: PublishedSnapshot) => void = () => {}
  const first = new Promise<PublishedSnapshot>((resolve) => {
    arrived = resolve
  })
  // Subscribed before the first read completes, so no version goes unseen.
  follower.subscribe((published) => {
    options.onSnapshot(published)
    arrived(published)
  })
  let initial = await follower.ready
  if (initial === null) {
    options.log(
      `config: no snapshot in ${origin} under ${options.prefix}config:current yet; waiting`,
    )
    initial = await Promise.race([first, options.interrupted.then(() => null)])
    if (initial === null) {
      await follower.close()
      return null
    }
  }
  return { feed: follower, initial, origin }
}

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'the Redis URL'
  }
}
