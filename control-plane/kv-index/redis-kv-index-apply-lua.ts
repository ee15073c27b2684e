import { redisKvIndexLuaPrelude as prelude } from './redis-kv-index-lua-prelude.ts'

/**
 * ARGV: prefix, pod, maxHashes, seq ('' = unguarded), then operations in order:
 *   'S', n, parent key expected ('' = no parent), [parent hash,] n hashes, n keys
 *   'R', n, n hashes
 *   'C'
 * (runs, so that HMGET takes a range of ARGV as it is)
 * A stored event whose parent is no longer mapped to the key the caller chained on is
 * not indexed (cold) and reported (its ordinal among the 'S' operations), so the caller
 * drops its stale hint and keeps no hints from it.
 * Each event is read and written back with one variadic command per key. A pod whose
 * engine hashes exceed `maxHashes` after an event is cleared, as by AllBlocksCleared: so
 * many more than any GPU holds means lost BlockRemoved events, an index not to trust.
 * (Exact oldest-first eviction, as in memory, needs an order kept per block: a zset
 * that cost a quarter of the script's time.)
 * With a seq, a batch at or below the pod's last applied seq (key q:pod) does nothing and
 * returns duplicate = 1: every scorer replica applies every pod's stream, once counts.
 * Returns { stored, removed, unknownParents, unknownRemovals, { rejected 'S' ordinals },
 * 1 if the cap cleared the pod else 0, duplicate }.
 */
export const redisKvIndexApplyLua = `${prelude}
local pod = ARGV[2]
local maxHashes = tonumber(ARGV[3])
local seq = ARGV[4]
if seq ~= '' then
  -- Seqs stay far below 2^53 (one per engine step), so Lua's numbers compare them exactly.
  local last = redis.call('GET', P .. 'q:' .. pod)
  if last and tonumber(seq) <= tonumber(last) then return { 0, 0, 0, 0, {}, 0, 1 } end
  redis.call('SET', P .. 'q:' .. pod, seq)
end
local E, H, R = P .. 'e:' .. pod, P .. 'h:' .. pod, P .. 'r:' .. pod
local hashes = redis.call('HLEN', E)
local extras = redis.call('EXISTS', R) == 1
local stored, removed, unknownParents, unknownRemovals = 0, 0, 0, 0
local rejected, capped, ordinal = {}, 0, 0

-- Reference changes of the current event, per block key, in first-touch order. held
-- marks keys known to be held (reached through one of the pod's engine hashes), whose
-- presence needs no read.
local delta, touched, held = {}, {}, {}
local function ref(key, n, known)
  if delta[key] == nil then
    touched[#touched + 1] = key
    delta[key] = n
  else
    delta[key] = delta[key] + n
  end
  if known then held[key] = true end
end

local function flushRefs()
  if #touched == 0 then return end
  local unsure = {}
  for i = 1, #touched do
    if not held[touched[i]] then unsure[#unsure + 1] = touched[i] end
  end
  local present = hmget(H, unsure)
  for i = 1, #unsure do
    if present[i] then held[unsure[i]] = true end
  end
  local extra = extras and hmget(R, touched) or {}
  local add, drop, setExtra, dropExtra = {}, {}, {}, {}
  for i = 1, #touched do
    local key = touched[i]
    local before = (tonumber(extra[i]) or 0) + (held[key] and 1 or 0)
    local after = before + delta[key]
    if after <= 0 then
      if before > 0 then drop[#drop + 1] = key end
    elseif before == 0 then
      add[#add + 1] = key
      add[#add + 1] = '1'
    end
    local beyond = math.max(0, after - 1)
    if beyond > 0 then
      setExtra[#setExtra + 1] = key
      setExtra[#setExtra + 1] = beyond
    elseif extra[i] then
      dropExtra[#dropExtra + 1] = key
    end
  end
  variadic('HSET', H, add)
  variadic('HDEL', H, drop)
  variadic('HSET', R, setExtra)
  variadic('HDEL', R, dropExtra)
  if #setExtra > 0 then extras = true end
  delta, touched, held = {}, {}, {}
end

-- Writes back the event's engine-hash values (false = deleted).
local function flushHashes(values)
  local sets, dels = {}, {}
  for hash, value in pairs(values) do
    if value then
      sets[#sets + 1] = hash
      sets[#sets + 1] = value
    else
      dels[#dels + 1] = hash
    end
  end
  variadic('HSET', E, sets)
  variadic('HDEL', E, dels)
end

-- The common store: every hash new, every key new to the pod, none twice. Decided on
-- reads only, so when it returns false nothing is written and the general path runs.
local function storeNew(read, offset, at, n)
  for j = 1, n do
    if read[offset + j] then return false end
  end
  local seen = {}
  for j = at, at + 2 * n - 1 do
    if seen[ARGV[j]] then return false end
    seen[ARGV[j]] = true
  end
  local present = hmget(H, ARGV, at + n, at + 2 * n - 1)
  for j = 1, n do
    if present[j] then return false end
  end
  local values, keys = {}, {}
  for j = 0, n - 1 do
    local key = ARGV[at + n + j]
    values[2 * j + 1] = ARGV[at + j]
    values[2 * j + 2] = key .. ':1'
    keys[2 * j + 1] = key
    keys[2 * j + 2] = '1'
  end
  variadic('HSET', E, values)
  variadic('HSET', H, keys)
  hashes = hashes + n
  return true
end

-- The general store: duplicates, re-keyed hashes, keys the pod already holds.
local function storeChanges(read, offset, at, n)
  local values = {}
  for j = 0, n - 1 do
    local hash, key = ARGV[at + j], ARGV[at + n + j]
    -- Only a value read before the event proves its key held; one written by it does not.
    local v = values[hash]
    local known = v == nil
    if known then v = read[offset + j + 1] end
    if v then
      local old, stores = string.sub(v, 1, 16), tonumber(string.sub(v, 18))
      -- The same key again is a re-announcement (report mode "full"): nothing changes.
      if old ~= key then
        -- The hash now means another key (garbage, never vLLM): the new one replaces it.
        ref(old, -stores, known)
        values[hash] = key .. ':1'
        ref(key, 1, false)
      end
    else
      values[hash] = key .. ':1'
      hashes = hashes + 1
      ref(key, 1, false)
    end
  end
  flushHashes(values)
  flushRefs()
end

-- ARGV[first] is the parent hash when expected ~= '', then n hashes from ARGV[at], n keys.
local function storeEvent(first, at, n, expected)
  local read = hmget(E, ARGV, first, at + n - 1)
  local offset = at - first
  if expected ~= '' then
    if not read[1] or string.sub(read[1], 1, 16) ~= expected then
      unknownParents = unknownParents + 1
      rejected[#rejected + 1] = ordinal
      return
    end
  end
  if not storeNew(read, offset, at, n) then
    storeChanges(read, offset, at, n)
  end
  stored = stored + n
  if hashes > maxHashes then
    clearPod(pod)
    hashes = 0
    capped = 1
  end
end

-- The common removal: each hash stored once, no key with extra references, none twice.
local function removeSingles(read, at, n)
  if extras then return false end
  local seen, keys = {}, {}
  for j = 1, n do
    local v, hash = read[j], ARGV[at + j - 1]
    if not v or seen[hash] or #v ~= 18 or string.byte(v, 18) ~= 49 then return false end
    seen[hash] = true
    -- Without extra references, distinct hashes map to distinct keys.
    keys[j] = string.sub(v, 1, 16)
  end
  variadic('HDEL', E, ARGV, at, at + n - 1)
  variadic('HDEL', H, keys)
  hashes = hashes - n
  removed = removed + n
  return true
end

-- n hashes from ARGV[at].
local function removeEvent(at, n)
  local read = hmget(E, ARGV, at, at + n - 1)
  if removeSingles(read, at, n) then return end
  local values = {}
  for j = 1, n do
    local hash = ARGV[at + j - 1]
    local v = values[hash]
    local known = v == nil
    if known then v = read[j] end
    if v then
      local key, stores = string.sub(v, 1, 16), tonumber(string.sub(v, 18))
      if stores > 1 then
        values[hash] = key .. ':' .. (stores - 1)
      else
        values[hash] = false
        hashes = hashes - 1
      end
      ref(key, -1, known)
      removed = removed + 1
    else
      unknownRemovals = unknownRemovals + 1
    end
  end
  flushHashes(values)
  flushRefs()
end

local i = 5
while i <= #ARGV do
  local op = ARGV[i]
  if op == 'S' then
    ordinal = ordinal + 1
    local n, expected = tonumber(ARGV[i + 1]), ARGV[i + 2]
    local at = expected == '' and i + 3 or i + 4
    storeEvent(i + 3, at, n, expected)
    i = at + 2 * n
  elseif op == 'R' then
    local n = tonumber(ARGV[i + 1])
    removeEvent(i + 2, n)
    i = i + 2 + n
  else
    clearPod(pod)
    hashes = 0
    i = i + 1
  end
end
settle(pod)
return { stored, removed, unknownParents, unknownRemovals, rejected, capped, 0 }
`
