local function standing(lb, ld)
  if lb == 0 and ld == 0 then return 'none' end
  if lb >= ld then return 'bounced' end
  return 'delivered'
end
local function move(key, state, by)
  if state == 'delivered' then redis.call('HINCRBY', key, 'd', by)
  elseif state == 'bounced' then redis.call('HINCRBY', key, 'b', by) end
end
local function latest(key, field, at, current)
  if at > current then redis.call('HSET', key, field, ARGV[2]) return at end
  return current
end
local fields = redis.call('HMGET', KEYS[1], 'lb', 'ld', 'lc', 'le')
local lb = tonumber(fields[1]) or 0
local ld = tonumber(fields[2]) or 0
local lc = tonumber(fields[3]) or 0
local le = tonumber(fields[4]) or 0
local before = standing(lb, ld)
local outcome = ARGV[1]
local at = tonumber(ARGV[2])
if outcome == 'hard_bounce' then
  redis.call('HINCRBY', KEYS[1], 'b', 1)
  lb = latest(KEYS[1], 'lb', at, lb)
elseif outcome == 'delivered' then
  redis.call('HINCRBY', KEYS[1], 'd', 1)
  ld = latest(KEYS[1], 'ld', at, ld)
elseif outcome == 'complaint' then
  redis.call('HINCRBY', KEYS[1], 'c', 1)
  lc = latest(KEYS[1], 'lc', at, lc)
else
  redis.call('HINCRBY', KEYS[1], 's', 1)
end
latest(KEYS[1], 'le', at, le)
local after = standing(lb, ld)
if before ~= after then
  move(KEYS[3], before, -1)
  move(KEYS[3], after, 1)
  if redis.call('HGET', KEYS[3], 'ca') == '1' then
    move(KEYS[4], before, -1)
    move(KEYS[4], after, 1)
  end
end
redis.call('LPUSH', KEYS[2], ARGV[2] .. '|' .. outcome .. '|' .. ARGV[3])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[5]) - 1)
for i = 1, 3 do redis.call('EXPIRE', KEYS[i], ARGV[4]) end
if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('EXPIRE', KEYS[4], ARGV[4]) end
return 1
