local give_up = tonumber(ARGV[4])
if give_up > 0 then
  local now = redis.call('TIME')
  if tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) > give_up then return {-1, 0, 0} end
end
local known = redis.call('GET', KEYS[2])
if known == 'void' then return {-2, 0, 0} end
if known then
  local calls, billable, used = string.match(known, '^(%d+):(%d):(%d+)$')
  return {tonumber(calls), tonumber(billable), tonumber(used)}
end
local pool = pool_from(6, #ARGV)
local calls, billable, used = record_one(ARGV[1], tonumber(ARGV[2]), pool)
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], calls .. ':' .. billable .. ':' .. used, 'PX', ARGV[5])
return {calls, billable, used}
