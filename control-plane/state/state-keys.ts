/**
 * Where the scorer replicas keep what `kinfctl inspect` and the status page read, beside
 * the KV index (redis-kv-index-lua.ts), the quotas (shared/protocol/quota-keys.ts) and the
 * config store (config-store-keys.ts), under the same prefix (shared/protocol/key-prefix.ts):
 *
 *   {prefix}state:replicas          zset    replica id → when its pod view expires (ms)
 *   {prefix}state:pods:{replica}    string  that replica's ReplicaPodViews (JSON), PX ttl
 *   {prefix}state:decisions         stream  field e: one DecisionEntry (JSON); MAXLEN ~ N
 *
 *   redis-cli ZRANGE kinf:state:replicas 0 -1 WITHSCORES
 *   redis-cli XREVRANGE kinf:state:decisions + - COUNT 5
 */
export interface StateKeys {
  replicas: string
  pods(replica: string): string
  decisions: string
}

export function stateKeys(prefix: string): StateKeys {
  return {
    replicas: `${prefix}state:replicas`,
    pods: (replica) => `${prefix}state:pods:${replica}`,
    decisions: `${prefix}state:decisions`,
  }
}
