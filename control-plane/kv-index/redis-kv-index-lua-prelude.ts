/**
 * Lua shared by the Redis index's scripts: key helpers and the per-pod operations that more
 * than one script performs. Every script starts with it and takes the key prefix as ARGV[1].
 */
export const redisKvIndexLuaPrelude = `
local P = ARGV[1]
local chunk = 1000

-- Variadic commands in chunks: Lua's unpack() is limited to a few thousand values.
-- HMGET of list[from..to] (default: all of list).
local function hmget(key, list, from, to)
  from, to = from or 1, to or #list
  if to < from then return {} end
  if to - from < chunk then return redis.call('HMGET', key, unpack(list, from, to)) end
  local out = {}
  for s = from, to, chunk do
    local part = redis.call('HMGET', key, unpack(list, s, math.min(to, s + chunk - 1)))
    for k = 1, #part do out[#out + 1] = part[k] end
  end
  return out
end

-- command key list[from..to] (default: all of list), in chunks.
local function variadic(command, key, list, from, to)
  from, to = from or 1, to or #list
  for s = from, to, chunk do
    redis.call(command, key, unpack(list, s, math.min(to, s + chunk - 1)))
  end
end

-- Keeps 'pods' in step with whether the pod holds anything.
local function settle(pod)
  if redis.call('EXISTS', P .. 'h:' .. pod, P .. 'x:' .. pod) > 0 then
    redis.call('SADD', P .. 'pods', pod)
  else
    redis.call('SREM', P .. 'pods', pod)
  end
end

-- AllBlocksCleared and dropPod: every stored and speculative entry of the pod.
local function clearPod(pod)
  local guesses = redis.call('HKEYS', P .. 'x:' .. pod)
  for i = 1, #guesses do guesses[i] = guesses[i] .. pod end
  variadic('ZREM', P .. 'spec', guesses)
  redis.call('UNLINK', P .. 'h:' .. pod, P .. 'r:' .. pod, P .. 'e:' .. pod, P .. 'x:' .. pod)
end

local function dropSpeculative(owner, key)
  redis.call('HDEL', P .. 'x:' .. owner, key)
  settle(owner)
end
`
