/**
 * Where the config store keeps published snapshots, every key under one prefix
 * (default `kinf:`, shared/protocol/key-prefix.ts), so operators can inspect them with
 * redis-cli (the Worker reads its copy from KV, shared/protocol/kv-snapshot-key.ts):
 *
 *   {prefix}config:version        string   the last version number handed out (INCR)
 *   {prefix}config:current        string   {"version":N,"hash":"sha256:…","publishedAt":ms}
 *   {prefix}config:versions       zset     the kept versions: score N, member as in current
 *   {prefix}config:snapshot:{N}   string   version N's snapshot, canonical JSON
 *   {prefix}config:notices        channel  {"version":N,"hash":"sha256:…"} on each new version
 *
 *   redis-cli GET kinf:config:current
 *   redis-cli ZREVRANGE kinf:config:versions 0 -1
 *
 * The scripts derive snapshot keys from the prefix, so all of these must live on one
 * Redis node (no Cluster), as with the KV index.
 */
export interface ConfigStoreKeys {
  prefix: string
  version: string
  current: string
  versions: string
  notices: string
  snapshot(version: number): string
}

export function configStoreKeys(prefix: string): ConfigStoreKeys {
  return {
    prefix,
    version: `${prefix}config:version`,
    current: `${prefix}config:current`,
    versions: `${prefix}config:versions`,
    notices: `${prefix}config:notices`,
    snapshot: (version) => `${prefix}config:snapshot:${version}`,
  }
}
