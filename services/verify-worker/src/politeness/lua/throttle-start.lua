local now = tonumber(ARGV[1])
local ends = tonumber(redis.call('HGET', KEYS[1], 'until'))
if ends and now < ends then
  return {ends, tonumber(redis.call('HGET', KEYS[1], 'delay')), tonumber(redis.call('HGET', KEYS[1], 'at'))}
end
local delay = tonumber(ARGV[3])
if ends then delay = tonumber(redis.call('HGET', KEYS[1], 'delay')) * 2 end
delay = math.max(delay, tonumber(ARGV[2]))
delay = math.min(delay, tonumber(ARGV[4]))
redis.call('HSET', KEYS[1], 'until', now + delay, 'delay', delay, 'at', now, 'probeUntil', 0)
redis.call('PEXPIRE', KEYS[1], delay + tonumber(ARGV[5]))
return {now + delay, delay, now}
