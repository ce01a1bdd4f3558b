local at = tonumber(redis.call('HGET', KEYS[1], 'at'))
if at and at <= tonumber(ARGV[1]) then redis.call('DEL', KEYS[1]) end
return 0
