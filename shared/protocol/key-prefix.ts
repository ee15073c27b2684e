/**
 * The prefix every key the services keep in Redis starts with, unless an operator sets
 * another: the config store (control-plane/config-store/config-store-keys.ts), the quota
 * ledger (quota-keys.ts), the replicas' state (control-plane/state/state-keys.ts) and the
 * KV index. One prefix per deployment, so `redis-cli --scan --pattern 'kinf:*'` finds them all.
 */
export const defaultKeyPrefix = 'kinf:'
