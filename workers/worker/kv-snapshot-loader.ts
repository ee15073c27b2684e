import { verifySnapshot } from '../../shared/config/compile-snapshot.ts'
import { type ConfigSnapshot, snapshotSchemaOf } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { builtinPlugins, type Plugins } from '../../shared/plugins.ts'
import { kvSnapshotKey } from '../../shared/protocol/kv-snapshot-key.ts'

/** What the loader needs of the CONFIG KV binding. */
export interface SnapshotKv {
  get(key: string, options?: { cacheTtl?: number }): Promise<string | null>
}

/**
 * The config snapshot from KV, verified once per distinct content and reused for
 * `ttlMs` within an isolate (KV itself is eventually consistent, about a minute). A
 * broken or missing snapshot is a clear 500, never a half-read config. Its schema is the
 * plugins' (the built-in ones unless told), built here once.
 */
export function createKvSnapshotLoader(
  kv: SnapshotKv,
  options: { ttlMs: number; nowMs: () => number; plugins?: Plugins },
): () => Promise<ConfigSnapshot> {
  const schema = snapshotSchemaOf(options.plugins ?? builtinPlugins)
  let cached: { text: string; snapshot: ConfigSnapshot; atMs: number } | null = null
  return async () => {
    const now = options.nowMs()
    if (cached && now - cached.atMs < options.ttlMs) return cached.snapshot
    const text = await kv.get(kvSnapshotKey, { cacheTtl: 60 })
    if (text === null)
      throw new KinfError(
        'invalid_config',
        `no config snapshot in KV under "${kvSnapshotKey}": kinfctl compile, then wrangler kv key put`,
        { status: 500 },
      )
    if (cached && text === cached.text) {
      cached.atMs = now
      return cached.snapshot
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw new KinfError('invalid_config', 'the config snapshot in KV is not JSON', {
        status: 500,
      })
    }
    // A snapshot that fails verification is the operator's problem, not the caller's: 500.
    const snapshot = await verifySnapshot(json, schema).catch((error: unknown) => {
      throw new KinfError('invalid_config', (error as Error).message, { status: 500 })
    })
    cached = { text, snapshot, atMs: now }
    return snapshot
  }
}
