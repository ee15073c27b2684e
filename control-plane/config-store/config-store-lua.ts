/**
 * The config store's scripts (keys in config-store-keys.ts). ARGV[1] is always the prefix.
 * Entries are built by concatenation rather than cjson.encode, whose key order and number
 * format are not fixed; hash and time are checked in TypeScript first, so no escaping.
 */

/**
 * ARGV[2] hash, [3] snapshot JSON, [4] publishedAt ms, [5] versions to keep.
 * Returns {0, current version} when the current snapshot has this hash (nothing written),
 * else {1, new version}, having stored it, trimmed old versions and published a notice.
 */
export const publishLua = `
local p = ARGV[1]
local current = redis.call('GET', p .. 'config:current')
if current then
  local ok, held = pcall(cjson.decode, current)
  if ok and type(held) == 'table' and held.hash == ARGV[2] and tonumber(held.version) then
    return {0, tonumber(held.version)}
  end
end
local version = redis.call('INCR', p .. 'config:version')
local entry = '{"version":' .. version .. ',"hash":"' .. ARGV[2] .. '","publishedAt":' .. ARGV[4] .. '}'
redis.call('SET', p .. 'config:snapshot:' .. version, ARGV[3])
redis.call('SET', p .. 'config:current', entry)
redis.call('ZADD', p .. 'config:versions', version, entry)
local beyond = -tonumber(ARGV[5]) - 1
local old = redis.call('ZRANGE', p .. 'config:versions', 0, beyond, 'WITHSCORES')
for i = 2, #old, 2 do
  redis.call('DEL', p .. 'config:snapshot:' .. old[i])
end
if #old > 0 then redis.call('ZREMRANGEBYRANK', p .. 'config:versions', 0, beyond) end
redis.call('PUBLISH', p .. 'config:notices', '{"version":' .. version .. ',"hash":"' .. ARGV[2] .. '"}')
return {1, version}
`

/**
 * ARGV[2] the newest version the caller knows. Returns nil when nothing was published,
 * {current} when current is not newer (or unreadable), else {current, its snapshot}: one
 * read, so the snapshot cannot be trimmed between the two.
 */
export const readCurrentLua = `
local p = ARGV[1]
local current = redis.call('GET', p .. 'config:current')
if not current then return nil end
local ok, held = pcall(cjson.decode, current)
local version = ok and type(held) == 'table' and tonumber(held.version)
if not version or version <= tonumber(ARGV[2]) then return {current} end
return {current, redis.call('GET', p .. 'config:snapshot:' .. string.format('%d', version))}
`
