import { z } from 'zod'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { KinfError } from '../../shared/errors/kinf-error.ts'

/** What `{prefix}config:current` and each member of `{prefix}config:versions` hold. */
export const PublishedVersion = z.strictObject({
  version: z.int().positive(),
  hash: z.string().regex(/^sha256:[a-f0-9]{64}$/),
  publishedAt: z.int().nonnegative(),
})
export type PublishedVersion = z.infer<typeof PublishedVersion>

/** What goes out on `{prefix}config:notices`. */
export const SnapshotNotice = PublishedVersion.pick({ version: true, hash: true })
export type SnapshotNotice = z.infer<typeof SnapshotNotice>

/** A verified snapshot with the version it was published as (0: read from a file). */
export interface PublishedSnapshot extends PublishedVersion {
  snapshot: ConfigSnapshot
}

/**
 * A stored snapshot as read back: verified, or why not (not JSON, schema, hash). `version`
 * is null when even the pointer to it is unreadable.
 */
export type SnapshotRead =
  | { ok: true; published: PublishedSnapshot }
  | { ok: false; version: number | null; error: KinfError }
