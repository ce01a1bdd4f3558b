if redis.call('HGET', KEYS[1], 'status') ~= 'retrying' then return 0 end
local marks = redis.call('HGETALL', KEYS[4])
for i = 1, #marks, 2 do
  local entries, shape = string.match(marks[i + 1], '^%d+:%d+:(%d+):(%d+):')
  if entries and redis.call('HEXISTS', KEYS[3], marks[i]) == 0 then
    local seq = redis.call('HINCRBY', KEYS[1], 'settled', 1)
    redis.call('HSET', KEYS[3], marks[i], seq .. ':' .. shape)
    redis.call('HINCRBY', KEYS[1], 'processed', entries)
    redis.call('HINCRBY', KEYS[1], 's:risky', entries)
  end
end
redis.call('DEL', KEYS[4], KEYS[5])
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, 2) == 'w:' then redis.call('HDEL', KEYS[1], field) end
end
move('completed', ARGV[1], ARGV[2])
return 1
