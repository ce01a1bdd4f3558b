local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local score = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not score then return 0 end
redis.call('ZREM', KEYS[1], ARGV[2])
local held = redis.call('ZRANGE', KEYS[1], 0, -1)
local allowed = #held < tonumber(ARGV[5])
if allowed and ARGV[6] == 'list' then
  local lists = 0
  for _, token in ipairs(held) do
    if string.sub(token, 1, 2) == 'l:' then lists = lists + 1 end
  end
  allowed = lists < tonumber(ARGV[7]) and redis.call('ZCARD', KEYS[2]) == 0
end
if not allowed then
  redis.call('ZADD', KEYS[1], score, ARGV[2])
  return 0
end
local ttl = tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return 1
