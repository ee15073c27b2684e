import type { PublishedSnapshot } from './published-snapshot.ts'

/**
 * What the scorer and the edge need of their configuration: the snapshot to use now, and
 * word of each newer one. Fed by Redis (follow-redis-snapshots.ts) or fixed (a file).
 */
export interface SnapshotFeed {
  /** The newest verified snapshot, or null before the first one. */
  current(): PublishedSnapshot | null
  /** Calls `listener` with each newer snapshot from now on; returns how to stop. */
  subscribe(listener: (published: PublishedSnapshot) => void): () => void
  close(): Promise<void>
}

/** A feed that never changes: a snapshot read once, from a file. */
export function staticSnapshotFeed(published: PublishedSnapshot): SnapshotFeed {
  return {
    current: () => published,
    subscribe: () => () => {},
    close: async () => {},
  }
}
