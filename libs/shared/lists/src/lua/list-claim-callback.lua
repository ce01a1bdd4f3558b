if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HGET', KEYS[1], 'callbackQueued') == '1' then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'callbackClaim') or '0') > tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'callbackClaim', ARGV[2])
return 1
