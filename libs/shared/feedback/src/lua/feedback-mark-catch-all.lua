if redis.call('HSETNX', KEYS[1], 'ca', '1') == 1 then
  local fields = redis.call('HMGET', KEYS[1], 'd', 'b')
  local d = tonumber(fields[1]) or 0
  local b = tonumber(fields[2]) or 0
  if d ~= 0 then redis.call('HINCRBY', KEYS[2], 'd', d) end
  if b ~= 0 then redis.call('HINCRBY', KEYS[2], 'b', b) end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('EXPIRE', KEYS[2], ARGV[1]) end
return 1
