import type { Plugins } from '../../shared/plugins.ts'
import { followRedisSnapshots } from './follow-redis-snapshots.ts'
import type { PublishedSnapshot } from './published-snapshot.ts'
import { readSnapshotFile } from './read-snapshot-file.ts'
import { type SnapshotFeed, staticSnapshotFeed } from './snapshot-feed.ts'

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
  /** The follower's safety-net poll of Redis (its default when absent). */
  pollMs?: number
  /** The strategies and conditions snapshots are read with; the built-in ones when absent. */
  plugins?: Plugins
}): Promise<ConfigFeed | null> {
  if (!/^rediss?:\/\//.test(options.config)) {
    const initial = await readSnapshotFile(options.config, options.plugins)
    options.onSnapshot(initial)
    return { initial, feed: staticSnapshotFeed(initial), origin: options.config }
  }
  const origin = withoutPassword(options.config)
  const follower = followRedisSnapshots({
    redis: options.config,
    prefix: options.prefix,
    log: options.log,
    ...(options.plugins !== undefined && { plugins: options.plugins }),
    ...(options.pollMs !== undefined && { pollMs: options.pollMs }),
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
  // A first read against an unreachable Redis can take long: a stop must not wait for it.
  const stopped = options.interrupted.then(() => 'stopped' as const)
  let initial = await Promise.race([follower.ready, stopped])
  if (initial === null) {
    options.log(
      `config: no snapshot in ${origin} under ${options.prefix}config:current yet; waiting`,
    )
    initial = await Promise.race([first, stopped])
  }
  if (initial === 'stopped') {
    await follower.close()
    return null
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
