import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import {
  followRedisSnapshots,
  type RedisSnapshotFollower,
} from '../../config-store/follow-redis-snapshots.ts'
import type { PublishedSnapshot } from '../../config-store/published-snapshot.ts'
import type { ApplyReport, RunningScorer } from '../../scorer/start-scorer.ts'

/** How long one change took to reach each consumer, from the API write. */
export interface Propagation {
  version: number
  /** The controller's part: the write to the version's publishedAt (wall clocks, ms). */
  publishedMs: number
  /** The follower handed the verified version on: the edge uses it from then on. */
  followerMs: number
  /** The scorer's applySnapshot of that version resolved. */
  scorerMs: number
  scorerOutcome: ApplyReport['outcome']
}

interface Watch {
  carries: (snapshot: ConfigSnapshot) => boolean
  writtenAt: number
  writtenAtWall: number
  seen: { version: number; publishedMs: number; followerMs: number } | null
  resolve: (propagation: Propagation) => void
}

export interface PropagationProbe {
  /** The first verified snapshot, and when it arrived (performance.now()). */
  readonly first: Promise<{ published: PublishedSnapshot; at: number }>
  /** From now on each followed version is applied to `scorer`, in order. */
  attach(scorer: RunningScorer): void
  /**
   * Resolves once both consumers use a snapshot that carries the change written at
   * `writtenAt` (performance.now() and Date.now() just before the write). Call it in the
   * same tick as the write, so no version can arrive unseen in between.
   */
  watch(
    carries: (snapshot: ConfigSnapshot) => boolean,
    writtenAt: { mono: number; wall: number },
  ): Promise<Propagation>
  /** The newest version followed. */
  version(): number
  close(): Promise<void>
}

/**
 * The scorer and the edge as they follow Redis: one follower (the edge serves its
 * `current()` per request, so its use time is the follower's) feeding a real scorer's
 * applySnapshot without waiting on it, as `kinfctl scorer` does.
 */
export function startPropagationProbe(options: {
  redisUrl: string
  prefix: string
  log: (line: string) => void
}): PropagationProbe {
  const watches = new Set<Watch>()
  let scorer: RunningScorer | null = null
  let latest = 0
  let arrived: (first: { published: PublishedSnapshot; at: number }) => void = () => {}
  const first = new Promise<{ published: PublishedSnapshot; at: number }>((resolve) => {
    arrived = resolve
  })
  const onSnapshot = (published: PublishedSnapshot) => {
    const at = performance.now()
    const atWall = Date.now()
    latest = published.version
    arrived({ published, at })
    for (const watch of watches)
      if (watch.seen === null && watch.carries(published.snapshot))
        watch.seen = {
          version: published.version,
          publishedMs: published.publishedAt - watch.writtenAtWall,
          followerMs: at - watch.writtenAt,
        }
    if (scorer) void applyTo(scorer, published)
  }
  const applyTo = async (target: RunningScorer, published: PublishedSnapshot) => {
    const report = await target.applySnapshot(published.snapshot).catch((error: unknown) => {
      options.log(`scorer: version ${published.version}: ${(error as Error).message}`)
      return { outcome: 'refused' as const, hash: null, reason: String(error) }
    })
    const at = performance.now()
    for (const watch of watches) {
      if (watch.seen === null || watch.seen.version > published.version) continue
      if (!watch.carries(published.snapshot)) continue
      watches.delete(watch)
      watch.resolve({ ...watch.seen, scorerMs: at - watch.writtenAt, scorerOutcome: report.outcome })
    }
  }
  const follower: RedisSnapshotFollower = followRedisSnapshots({
    redis: options.redisUrl,
    prefix: options.prefix,
    onSnapshot,
    log: options.log,
  })
  return {
    first,
    attach(target) {
      scorer = target
    },
    watch(carries, writtenAt) {
      return new Promise((resolve) => {
        watches.add({
          carries,
          writtenAt: writtenAt.mono,
          writtenAtWall: writtenAt.wall,
          seen: null,
          resolve,
        })
      })
    },
    version: () => latest,
    close: () => follower.close(),
  }
}
