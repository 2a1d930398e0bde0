/**
 * The store operations, each one atomic Lua script. Every key a script touches
 * carries the same hash tag, so each runs on one Cluster slot.
 *
 * Key layout (`p` = prefix, tag = `{c:<conversionId>}` or `{e:<eventId>}`):
 *   p{tag}:done:<eventId>   "1"       handled (or judged stale), TTL dedupeTtl
 *   p{tag}:lease:<eventId>  token     an attempt is running, TTL lease
 *   p{tag}:wm               order     newest order handled, TTL orderingTtl
 *   p{tag}:lock             token     an event of this conversion is running, TTL lease
 *   p{streak}:count         integer   answers in a row that were not 2xx, TTL dedupeTtl
 *   p{streak}:codes         list      their latest error codes, newest first, TTL dedupeTtl
 *
 * `order` is the event's ordering key (BeginInput.order): its createdAt in
 * microseconds since the epoch, times two, plus one for conversion.updated. It is
 * about 3.5e15 today, below 2^53, so Lua's doubles compare it exactly.
 */

/**
 * KEYS: done, lease[, wm, lock]   ARGV: token, leaseMs, order, dedupeTtl
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
 * KEYS: done, lease[, wm, lock]   ARGV: token, order, dedupeTtl, orderingTtl
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
 * KEYS: lease[, lock]   ARGV: token, leaseMs. Renews what this token still holds;
 * 1 when the lease was its own, else 0 (nothing changed).
 */
export const EXTEND = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if KEYS[2] and redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 1
`

/**
 * KEYS: done[, wm]   ARGV: order. Read-only: {'duplicate'} | {'stale'} | {'unsettled'}.
 */
export const PEEK = `
if redis.call('EXISTS', KEYS[1]) == 1 then return {'duplicate'} end
if KEYS[2] then
  local wm = redis.call('GET', KEYS[2])
  if wm and tonumber(wm) >= tonumber(ARGV[1]) then return {'stale'} end
end
return {'unsettled'}
`

/**
 * KEYS: count, codes   ARGV: code ('' for a 2xx answer), codes kept, ttl.
 * A 2xx answer resets the streak: {0}. Otherwise {count, {codes, newest first}}.
 */
export const RECORD_ANSWER = `
if ARGV[1] == '' then
  redis.call('DEL', KEYS[1], KEYS[2])
  return {0}
end
local count = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {count, redis.call('LRANGE', KEYS[2], 0, -1)}
`
