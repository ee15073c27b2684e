/**
 * The Workers KV key of the config snapshot: `kinfctl compile` output, written by the
 * controller's publisher (control-plane/config-store/cloudflare-kv-publisher.ts) or
 * `wrangler kv key put`, read by the edge Worker (workers/worker/kv-snapshot-loader.ts).
 */
export const kvSnapshotKey = 'snapshot'
