import { redisKvIndexApplyLua as apply } from './redis-kv-index-apply-lua.ts'
import { redisKvIndexLuaPrelude as prelude } from './redis-kv-index-lua-prelude.ts'

/**
 * The Redis index's Lua scripts. Every script takes the key prefix as ARGV[1] and builds
 * key names itself (no KEYS), so it needs a standalone Redis (or ElastiCache without
 * cluster mode). Layout, with P the prefix, K a block key as 16 hex digits:
 *
 *   P h:pod    hash  K → '1': the pod's stored blocks (at least one reference each)
 *   P r:pod    hash  K → references beyond the first (other engine hashes of the block), usually absent
 *   P e:pod    hash  engine hash (hex) → K..':'..stores (1: a re-announcement is not counted)
 *   P x:pod    hash  K → expiry ms of the pod's speculative entry
 *   P spec     zset  K..pod → expiry, for lazy purging and the global cap
 *   P pods     set   pods holding anything
 *
 * Everything is per pod, so a batch touches a handful of keys with one variadic command
 * each per event (measured here: ~3 µs per stored block, where one command per block on a
 * per-block key cost ~6); dropPod unlinks four keys. A lookup reads each pod's hash for the
 * chain's keys in growing chunks and stops at the pod's first missing block. K's fixed width
 * keeps `spec` members unambiguous for any pod name.
 */

/**
 * ARGV: prefix, now, purge limit, pod count, pods (distinct), block keys. First purges up
 * to `limit` expired speculative entries; then, per pod, reads its stored (and, if it has
 * any, speculative) entries for the chain's keys in chunks of 16, 32, … up to 512, and
 * stops at its first block neither stored nor held until after `now`.
 * Returns each pod's depth, aligned with the pods given.
 */
const lookup = `${prelude}
local now, limit, np = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if limit > 0 then
  local due = redis.call('ZRANGEBYSCORE', P .. 'spec', '-inf', ARGV[2], 'LIMIT', 0, limit)
  for i = 1, #due do
    redis.call('ZREM', P .. 'spec', due[i])
    dropSpeculative(string.sub(due[i], 17), string.sub(due[i], 1, 16))
  end
end
local base = 4 + np
local blocks = #ARGV - base
local depth = {}
for j = 1, np do
  local H, X = P .. 'h:' .. ARGV[4 + j], P .. 'x:' .. ARGV[4 + j]
  local d = 0
  if blocks > 0 and redis.call('EXISTS', H, X) > 0 then
    local guessing = redis.call('EXISTS', X) == 1
    local size = 16
    while d < blocks do
      local last = math.min(blocks, d + size)
      local held = redis.call('HMGET', H, unpack(ARGV, base + d + 1, base + last))
      local guessed = guessing and redis.call('HMGET', X, unpack(ARGV, base + d + 1, base + last))
      local span, k = last - d, 0
      while k < span do
        local g = guessed and guessed[k + 1]
        if not (held[k + 1] or (g and tonumber(g) > now)) then break end
        k = k + 1
      end
      d = d + k
      if k < span then break end
      size = math.min(2 * size, 512)
    end
  end
  depth[j] = d
end
return depth
`

/**
 * ARGV: prefix, pod, expiry, cap, block keys. Extends (never shortens) each entry; beyond
 * `cap` entries over all pods, the ones expiring first are evicted.
 */
const speculate = `${prelude}
local pod, expiry, cap = ARGV[2], ARGV[3], tonumber(ARGV[4])
local X = P .. 'x:' .. pod
local later = tonumber(expiry)
local keys = {}
for i = 5, #ARGV do keys[#keys + 1] = ARGV[i] end
local current = hmget(X, keys)
local sets, members, seen = {}, {}, {}
for k = 1, #keys do
  local key = keys[k]
  if not seen[key] and (not current[k] or tonumber(current[k]) < later) then
    sets[#sets + 1] = key
    sets[#sets + 1] = expiry
    members[#members + 1] = expiry
    members[#members + 1] = key .. pod
  end
  seen[key] = true
end
variadic('HSET', X, sets)
variadic('ZADD', P .. 'spec', members)
settle(pod)
local over = redis.call('ZCARD', P .. 'spec') - cap
if over > 0 then
  local evicted = redis.call('ZPOPMIN', P .. 'spec', over)
  for k = 1, #evicted, 2 do
    dropSpeculative(string.sub(evicted[k], 17), string.sub(evicted[k], 1, 16))
  end
end
return 0
`

/** ARGV: prefix, pod. Forgets the pod's last applied seq too (its stream may restart at 0). */
const dropPod = `${prelude}
clearPod(ARGV[2])
redis.call('UNLINK', P .. 'q:' .. ARGV[2])
settle(ARGV[2])
return 0
`

/** ARGV: prefix. Returns { (block, pod) entries, pods with at least one }. */
const size = `${prelude}
local pods = redis.call('SMEMBERS', P .. 'pods')
local entries, held = 0, 0
for i = 1, #pods do
  local H = P .. 'h:' .. pods[i]
  local n = redis.call('HLEN', H)
  local guesses = redis.call('HKEYS', P .. 'x:' .. pods[i])
  if #guesses > 0 then
    local stored = hmget(H, guesses)
    for k = 1, #guesses do
      if not stored[k] then n = n + 1 end
    end
  end
  entries = entries + n
  if n > 0 then held = held + 1 end
end
return { entries, held }
`

export const redisKvIndexLua = { apply, lookup, speculate, dropPod, size } as const
export type RedisKvIndexScript = keyof typeof redisKvIndexLua
