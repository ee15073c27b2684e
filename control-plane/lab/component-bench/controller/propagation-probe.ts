import { Redis } from 'ioredis'
import type { ConfigSnapshot } from '../../../../shared/config/config-snapshot.ts'
import { configStoreKeys } from '../../../config-store/config-store-keys.ts'
import {
  followRedisSnapshots,
  type RedisSnapshotFollower,
} from '../../../config-store/follow-redis-snapshots.ts'
import type { PublishedSnapshot } from '../../../config-store/published-snapshot.ts'
import type { ApplyReport, RunningScorer } from '../../../scorer/start-scorer.ts'

/** How long one change took to reach each consumer, from the API write. */
export interface Propagation {
  version: number
  /** The controller's part: the write to the version's publishedAt (wall clocks, ms). */
  publishedMs: number
  /** The version's notice reached a subscriber here: the controller's publish is done. */
  noticeMs: number | null
  /** The follower handed the verified version on: the edge uses it from then on. */
  followerMs: number
  /** The scorer's live pools showed the change (its router takes new requests by them). */
  scorerRoutesMs: number
  /** The scorer's applySnapshot of that version resolved. */
  scorerMs: number
  scorerOutcome: ApplyReport['outcome']
}

/** What a snapshot, and the scorer's live state, look like once a change is in. */
export interface ChangeCheck {
  carries: (snapshot: ConfigSnapshot) => boolean
  inScorer: ((scorer: RunningScorer) => boolean) | null
}

interface Watch extends ChangeCheck {
  writtenAt: { mono: number; wall: number }
  seen: Pick<Propagation, 'version' | 'publishedMs' | 'noticeMs' | 'followerMs'> | null
  routesMs: number | null
  applied: { ms: number; outcome: ApplyReport['outcome'] } | null
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
  watch(check: ChangeCheck, writtenAt: { mono: number; wall: number }): Promise<Propagation>
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
  let arrived: (first: { published: PublishedSnapshot; at: number }) => void = () => {}
  const first = new Promise<{ published: PublishedSnapshot; at: number }>((resolve) => {
    arrived = resolve
  })
  const notices = watchNotices(options.redisUrl, options.prefix)
  const onSnapshot = (published: PublishedSnapshot) => {
    const at = performance.now()
    arrived({ published, at })
    const noticeAt = notices.at(published.version)
    for (const watch of watches)
      if (watch.seen === null && watch.carries(published.snapshot)) {
        watch.seen = {
          version: published.version,
          publishedMs: published.publishedAt - watch.writtenAt.wall,
          noticeMs: noticeAt === null ? null : noticeAt - watch.writtenAt.mono,
          followerMs: at - watch.writtenAt.mono,
        }
        if (scorer) pollRouting(watch, scorer)
      }
    if (scorer) void applyTo(scorer, published)
  }
  const applyTo = async (target: RunningScorer, published: PublishedSnapshot) => {
    const report = await target.applySnapshot(published.snapshot).catch((error: unknown) => {
      options.log(`scorer: version ${published.version}: ${(error as Error).message}`)
      return { outcome: 'refused' as const }
    })
    const at = performance.now()
    for (const watch of watches) {
      if (watch.seen === null || watch.seen.version > published.version) continue
      if (!watch.carries(published.snapshot)) continue
      const ms = at - watch.writtenAt.mono
      watch.applied = { ms, outcome: report.outcome }
      // Applied, the live pools hold the change; refused, they never will.
      if (watch.inScorer === null || report.outcome === 'refused') watch.routesMs ??= ms
      else if (watch.inScorer(target)) watch.routesMs ??= ms
      finish(watch)
    }
  }
  /** 1 ms polls of the live pools from the version's arrival: they change mid-apply. */
  const pollRouting = (watch: Watch, target: RunningScorer) => {
    const check = () => {
      if (!watches.has(watch) || watch.routesMs !== null) return
      if (watch.inScorer?.(target)) {
        watch.routesMs = performance.now() - watch.writtenAt.mono
        finish(watch)
      } else setTimeout(check, 1)
    }
    if (watch.inScorer !== null) check()
  }
  const finish = (watch: Watch) => {
    if (watch.seen === null || watch.applied === null || watch.routesMs === null) return
    watches.delete(watch)
    watch.resolve({
      ...watch.seen,
      scorerRoutesMs: watch.routesMs,
      scorerMs: watch.applied.ms,
      scorerOutcome: watch.applied.outcome,
    })
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
    watch(check, writtenAt) {
      return new Promise((resolve) => {
        watches.add({ ...check, writtenAt, seen: null, routesMs: null, applied: null, resolve })
      })
    },
    async close() {
      await follower.close()
      notices.close()
    },
  }
}

/** When each version's notice arrived here (performance.now()), on a connection of its own. */
function watchNotices(url: string, prefix: string) {
  const arrivals = new Map<number, number>()
  const subscriber = new Redis(url)
  subscriber.on('error', () => undefined)
  subscriber.on('message', (_channel: string, message: string) => {
    const at = performance.now()
    const version = (JSON.parse(message) as { version?: unknown }).version
    if (typeof version === 'number') arrivals.set(version, at)
  })
  void subscriber.subscribe(configStoreKeys(prefix).notices)
  return {
    at: (version: number) => arrivals.get(version) ?? null,
    close: () => subscriber.disconnect(),
  }
}
