import { canonicalJson } from '../../../../shared/config/canonical-json.ts'
import { verifySnapshot } from '../../../../shared/config/compile-snapshot.ts'
import type { ConfigSnapshot } from '../../../../shared/config/config-snapshot.ts'
import { createRedisSnapshotStore } from '../../../config-store/redis-snapshot-store.ts'

/** What one snapshot of this size costs each side with nothing else running, ms (median). */
export interface SnapshotCosts {
  /** canonicalJson of the snapshot: what Redis stores and the hash is taken of. */
  canonicalJsonMs: number
  /** Schema parse and hash check: the publisher does it before the write, the follower after the read. */
  verifyMs: number
  /** A follower's read of config:current and the snapshot, verified (store.current()). */
  readMs: number
}

/**
 * Times the steps between publishing and using a snapshot while this process is quiet,
 * so the benchmark can tell their own cost from waiting on a busy event loop (this
 * process also serves the API server and, later, runs the scorer).
 */
export async function measureSnapshotCosts(
  snapshot: ConfigSnapshot,
  redis: { url: string; prefix: string },
  runs = 9,
): Promise<SnapshotCosts> {
  const store = await createRedisSnapshotStore({ redis: redis.url, prefix: redis.prefix })
  try {
    return {
      canonicalJsonMs: await medianMs(runs, async () => canonicalJson(snapshot)),
      verifyMs: await medianMs(runs, () => verifySnapshot(snapshot)),
      readMs: await medianMs(runs, () => store.current()),
    }
  } finally {
    await store.close()
  }
}

async function medianMs(runs: number, step: () => Promise<unknown>): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await step()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)] ?? 0
}
