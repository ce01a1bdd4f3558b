local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 0 end
if is_ended(status) then return 1 end
move(ARGV[1], ARGV[2], ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'error', ARGV[4]) end
return 1
