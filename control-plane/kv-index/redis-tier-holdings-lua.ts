import { redisKvIndexLuaPrelude as prelude } from './redis-kv-index-lua-prelude.ts'

/**
 * The Redis tier holdings' scripts (redis-tier-holdings.ts). Every script takes the key
 * prefix as ARGV[1] and builds key names itself, as the KvIndex's do. Layout, with P the
 * prefix and H an engine hash as hex (modulo 2^64):
 *
 *   P tm:pod               set   the media the pod holds anything in
 *   P t:<len>:pod medium   hash  H → how many times the pod holds it in that medium
 *   P tq:pod               string  the last seq applied for the pod
 *
 * The pod's byte length goes into a tier's key so that no (pod, medium) pair names
 * another's. These keys share the prefix with the KvIndex's, whose names start otherwise.
 */
const keys = `${prelude}
local function tierKey(pod, medium) return P .. 't:' .. #pod .. ':' .. pod .. medium end
local function clearTiers(pod)
  local M = P .. 'tm:' .. pod
  local media = redis.call('SMEMBERS', M)
  for i = 1, #media do redis.call('UNLINK', tierKey(pod, media[i])) end
  redis.call('UNLINK', M)
end
`

/**
 * ARGV: prefix, pod, seq ('' = unguarded), maxHashes, maxTiers, then operations in order:
 *   'S', medium, n, n hashes   (n >= 1)
 *   'R', medium, n, n hashes   (n >= 1)
 *   'C'
 * Returns 1 when the seq was at or below the pod's last (nothing done), else 0.
 */
const apply = `${keys}
local pod, seq = ARGV[2], ARGV[3]
local maxHashes, maxTiers = tonumber(ARGV[4]), tonumber(ARGV[5])
local M = P .. 'tm:' .. pod
if seq ~= '' then
  local last = redis.call('GET', P .. 'tq:' .. pod)
  if last and tonumber(seq) <= tonumber(last) then return 1 end
  redis.call('SET', P .. 'tq:' .. pod, seq)
end

-- Each distinct hash of ARGV[at .. at+n-1] with how many times it appears.
local function tally(at, n)
  local times, order = {}, {}
  for j = at, at + n - 1 do
    local h = ARGV[j]
    if times[h] == nil then
      order[#order + 1] = h
      times[h] = 1
    else
      times[h] = times[h] + 1
    end
  end
  return times, order
end

local function store(medium, at, n)
  if redis.call('SISMEMBER', M, medium) == 0 and redis.call('SCARD', M) >= maxTiers then return end
  local T = tierKey(pod, medium)
  local times, order = tally(at, n)
  local current = hmget(T, order)
  local sets = {}
  for k = 1, #order do
    sets[#sets + 1] = order[k]
    sets[#sets + 1] = (tonumber(current[k]) or 0) + times[order[k]]
  end
  variadic('HSET', T, sets)
  redis.call('SADD', M, medium)
  if redis.call('HLEN', T) > maxHashes then
    redis.call('UNLINK', T)
    redis.call('SREM', M, medium)
  end
end

local function remove(medium, at, n)
  if redis.call('SISMEMBER', M, medium) == 0 then return end
  local T = tierKey(pod, medium)
  local times, order = tally(at, n)
  local current = hmget(T, order)
  local sets, dels = {}, {}
  for k = 1, #order do
    local held = tonumber(current[k])
    if held then
      local left = held - times[order[k]]
      if left > 0 then
        sets[#sets + 1] = order[k]
        sets[#sets + 1] = left
      else
        dels[#dels + 1] = order[k]
      end
    end
  end
  variadic('HSET', T, sets)
  variadic('HDEL', T, dels)
  if redis.call('EXISTS', T) == 0 then redis.call('SREM', M, medium) end
end

local i = 6
while i <= #ARGV do
  local op = ARGV[i]
  if op == 'C' then
    clearTiers(pod)
    i = i + 1
  else
    local medium, n = ARGV[i + 1], tonumber(ARGV[i + 2])
    if op == 'S' then store(medium, i + 3, n) else remove(medium, i + 3, n) end
    i = i + 3 + n
  end
end
return 0
`

/** ARGV: prefix, pod, medium, hashes. Returns 1 or 0 per hash. */
const holds = `${keys}
local T = tierKey(ARGV[2], ARGV[3])
local present = hmget(T, ARGV, 4, #ARGV)
local out = {}
for k = 1, #present do out[k] = present[k] and 1 or 0 end
return out
`

/** ARGV: prefix, pods. Returns per pod { medium, count, medium, count, … }. */
const counts = `${keys}
local out = {}
for j = 2, #ARGV do
  local media = redis.call('SMEMBERS', P .. 'tm:' .. ARGV[j])
  local flat = {}
  for k = 1, #media do
    flat[#flat + 1] = media[k]
    flat[#flat + 1] = redis.call('HLEN', tierKey(ARGV[j], media[k]))
  end
  out[#out + 1] = flat
end
return out
`

/** ARGV: prefix, pod. */
const dropPod = `${keys}
clearTiers(ARGV[2])
redis.call('UNLINK', P .. 'tq:' .. ARGV[2])
return 0
`

export const redisTierHoldingsLua = { apply, holds, counts, dropPod } as const
