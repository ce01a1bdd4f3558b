local ends = tonumber(redis.call('HGET', KEYS[1], 'until'))
if not ends then return {1, 0} end
local now = tonumber(ARGV[1])
if now < ends then return {0, ends} end
local probe = tonumber(redis.call('HGET', KEYS[1], 'probeUntil') or '0')
if now < probe then return {0, probe} end
redis.call('HSET', KEYS[1], 'probeUntil', now + tonumber(ARGV[2]))
return {1, 1}
