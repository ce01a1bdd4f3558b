if redis.call('HGET', KEYS[1], 'status') == 'queued' then redis.call('HSET', KEYS[1], 'status', 'running', 'startedAt', ARGV[1], 'touchedAt', ARGV[1]) end
return 1
