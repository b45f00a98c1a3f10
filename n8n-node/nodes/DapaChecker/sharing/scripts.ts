// The Lua scripts the shared store runs through webdis's EVAL, each one call whatever the number of domains it
// carries: that is what keeps the store's cost per request constant. Each opens with `-- dapa:<name>` (the name the
// tests' stand-in of webdis recognizes). Keys are all under the prefix passed first (`dapa:<digest>`); a claim
// `c:<domain>` holds its owner, and counts only while the owner's heartbeat `o:<owner>` lives (one SET per execution
// keeps every claim it holds), so a worker that dies frees its domains when its heartbeat runs out.

/**
 * ARGV: prefix, owner, heartbeat ms, claim ms, '1' to ignore kept answers, domains. Per domain: its kept answer (a
 * string), 0 (another live execution holds it) or 1 (claimed by owner). The owner's heartbeat is renewed.
 */
export const CLAIM = `-- dapa:claim
local p, owner = ARGV[1], ARGV[2]
redis.call('set', p .. ':o:' .. owner, '1', 'px', ARGV[3])
local out = {}
for i = 6, #ARGV do
  local d = ARGV[i]
  local answer = ARGV[5] == '0' and redis.call('get', p .. ':r:' .. d)
  if answer then
    out[#out + 1] = answer
  else
    local holder = redis.call('get', p .. ':c:' .. d)
    if holder and holder ~= owner and redis.call('exists', p .. ':o:' .. holder) == 1 then
      out[#out + 1] = 0
    else
      redis.call('set', p .. ':c:' .. d, owner, 'px', ARGV[4])
      out[#out + 1] = 1
    end
  end
end
return out`;

/** ARGV: prefix, owner, answer ms, then domain and answer pairs. Keeps each answer; frees owner's claim of it. */
export const PUBLISH = `-- dapa:publish
local p, owner = ARGV[1], ARGV[2]
for i = 4, #ARGV, 2 do
  local c = p .. ':c:' .. ARGV[i]
  redis.call('set', p .. ':r:' .. ARGV[i], ARGV[i + 1], 'px', ARGV[3])
  if redis.call('get', c) == owner then redis.call('del', c) end
end
return 1`;

/**
 * ARGV: prefix, owner, '1' to end owner's heartbeat, then domain and new-owner pairs ('' frees it). Only claims
 * owner still holds change (one that ran out may be another's now). Returns how many did.
 */
export const RELEASE = `-- dapa:release
local p, owner = ARGV[1], ARGV[2]
local n = 0
for i = 4, #ARGV, 2 do
  local c = p .. ':c:' .. ARGV[i]
  if redis.call('get', c) == owner then
    if ARGV[i + 1] == '' then redis.call('del', c) else redis.call('set', c, ARGV[i + 1], 'keepttl') end
    n = n + 1
  end
end
if ARGV[3] == '1' then redis.call('del', p .. ':o:' .. owner) end
return n`;

/**
 * ARGV: prefix. How many sends, the minute's sends, then the plan's lessons: one flat list (webdis answers a nested
 * list with nulls).
 */
export const WINDOW = `-- dapa:window
local sends = redis.call('lrange', ARGV[1] .. ':sends', 0, -1)
local out = {#sends}
for _, s in ipairs(sends) do out[#out + 1] = s end
for _, l in ipairs(redis.call('lrange', ARGV[1] .. ':plans', 0, -1)) do out[#out + 1] = l end
return out`;

/** ARGV: prefix, entry, ms. Reserves a request (appended to those in flight); returns every entry in flight. */
export const RESERVE = `-- dapa:reserve
local f = ARGV[1] .. ':flight'
redis.call('rpush', f, ARGV[2])
redis.call('pexpire', f, ARGV[3])
return redis.call('lrange', f, 0, -1)`;

/**
 * ARGV: prefix, sends kept, sends ms, n, n sends, then reservations to free. The answered requests' sends join the
 * minute before their reservations go (no moment where a request counts neither as in flight nor as sent).
 */
export const FLUSH = `-- dapa:flush
local p, n = ARGV[1], tonumber(ARGV[4])
local s = p .. ':sends'
if n > 0 then
  for i = 5, 4 + n do redis.call('rpush', s, ARGV[i]) end
  redis.call('ltrim', s, -tonumber(ARGV[2]), -1)
  redis.call('pexpire', s, ARGV[3])
end
for i = 5 + n, #ARGV do redis.call('lrem', p .. ':flight', 1, ARGV[i]) end
return 1`;

/** ARGV: prefix, lesson, lessons kept, ms. Appends a lesson of the plan (never read, merged and written back). */
export const PLAN = `-- dapa:plan
local k = ARGV[1] .. ':plans'
redis.call('rpush', k, ARGV[2])
redis.call('ltrim', k, -tonumber(ARGV[3]), -1)
redis.call('pexpire', k, ARGV[4])
return 1`;
