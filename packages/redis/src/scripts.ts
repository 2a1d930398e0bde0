/**
 * The three store operations, each one atomic Lua script. Every key a script
 * touches carries the same hash tag, so each runs on one Cluster slot.
 *
 * Key layout (`p` = prefix, tag = `{c:<conversionId>}` or `{e:<eventId>}`):
 *   p{tag}:done:<eventId>   "1"            handled (or judged stale), TTL dedupeTtl
 *   p{tag}:lease:<eventId>  token          an attempt is running, TTL lease
 *   p{tag}:wm               createdAt ms   newest handled createdAt, TTL orderingTtl
 *   p{tag}:lock             token          an event of this conversion is running, TTL lease
 */

/**
 * KEYS: done, lease[, wm, lock]   ARGV: token, leaseMs, createdAt, dedupeTtl
 * Returns {'claimed'} | {'duplicate'} | {'in_progress'} | {'stale'} | {'locked', pttl}
 */
export const BEGIN = `
if redis.call('EXISTS', KEYS[1]) == 1 then return {'duplicate'} end
if redis.call('EXISTS', KEYS[2]) == 1 then return {'in_progress'} end
if #KEYS == 4 then
  local wm = redis.call('GET', KEYS[3])
  if wm and tonumber(wm) >= tonumber(ARGV[3]) then
    redis.call('SET', KEYS[1], '1', 'PX', ARGV[4])
    return {'stale'}
  end
  local held = redis.call('PTTL', KEYS[4])
  if held > 0 then return {'locked', held} end
  redis.call('SET', KEYS[4], ARGV[1], 'PX', ARGV[2])
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return {'claimed'}
`

/**
 * KEYS: done, lease[, wm, lock]   ARGV: token, createdAt, dedupeTtl, orderingTtl
 * Returns 1 when committed, 0 when the lease belongs to a newer attempt or the
 * event is already done (a late commit changes nothing).
 */
export const COMMIT = `
local lease = redis.call('GET', KEYS[2])
if (lease and lease ~= ARGV[1]) or redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if lease then redis.call('DEL', KEYS[2]) end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[3])
if #KEYS == 4 then
  local wm = redis.call('GET', KEYS[3])
  if (not wm) or tonumber(wm) < tonumber(ARGV[2]) then
    redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[4])
  end
  if redis.call('GET', KEYS[4]) == ARGV[1] then redis.call('DEL', KEYS[4]) end
end
return 1
`

/** KEYS: lease[, lock]   ARGV: token. Drops only what this token still holds. */
export const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
if KEYS[2] and redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
`

/**
 * KEYS: done[, wm]   ARGV: createdAt. Read-only: {'duplicate'} | {'stale'} | {'unsettled'}.
 */
export const PEEK = `
if redis.call('EXISTS', KEYS[1]) == 1 then return {'duplicate'} end
if KEYS[2] then
  local wm = redis.call('GET', KEYS[2])
  if wm and tonumber(wm) >= tonumber(ARGV[1]) then return {'stale'} end
end
return {'unsettled'}
`
