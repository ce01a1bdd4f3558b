local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local held = redis.call('ZRANGE', KEYS[1], 0, -1)
local ttl = tonumber(ARGV[3])
local function take()
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[2])
  redis.call('ZREM', KEYS[2], ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ttl * 2)
  return 1
end
if #held >= tonumber(ARGV[4]) then
  if ARGV[5] == 'batch' then
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[7]), ARGV[2])
    redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[7]) * 2)
  end
  return 0
end
if ARGV[5] == 'batch' then return take() end
local lists = 0
for _, token in ipairs(held) do
  if string.sub(token, 1, 2) == 'l:' then lists = lists + 1 end
end
if lists >= tonumber(ARGV[6]) or redis.call('ZCARD', KEYS[2]) > 0 then return 0 end
return take()
