local known = redis.call('GET', KEYS[2])
redis.call('SET', KEYS[2], 'void', 'PX', ARGV[3])
if not known or known == 'void' then return 0 end
local billable_field = ARGV[1] .. ':billable'
redis.call('HINCRBY', KEYS[1], ARGV[1] .. ':calls', -1)
local frees_billed = pool_calls(pool_from(4, #ARGV)) >= tonumber(ARGV[2])
local billed = tonumber(redis.call('HGET', KEYS[1], billable_field) or '0')
if (string.match(known, '^%d+:(%d)') == '1' or frees_billed) and billed > 0 then
  redis.call('HINCRBY', KEYS[1], billable_field, -1)
end
return 1
