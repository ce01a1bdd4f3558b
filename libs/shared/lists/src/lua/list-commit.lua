local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'failed', 0} end
if is_ended(status) then return {status, 0} end
local now = ARGV[1]
if status == 'queued' then
  redis.call('HSET', KEYS[1], 'status', 'running', 'startedAt', now)
  status = 'running'
end
redis.call('HSET', KEYS[1], 'touchedAt', now)
local function shape_of(result)
  local digest = 'h' .. string.sub(redis.sha1hex(result), 1, 16)
  local shape = redis.call('HGET', KEYS[7], digest)
  if not shape then
    shape = redis.call('HINCRBY', KEYS[7], 'n', 1)
    redis.call('HSET', KEYS[7], digest, shape, shape, result)
  end
  return shape
end
-- An address no longer waiting: its entries leave the count of its reason.
local function unwait(index)
  local mark = redis.call('HGET', KEYS[4], index)
  if not mark then return end
  local entries, reason = string.match(mark, '^%d+:%d+:(%d+):%d+:(.+)$')
  if entries then redis.call('HINCRBY', KEYS[1], 'w:' .. reason, -tonumber(entries)) end
end
local n = tonumber(ARGV[5])
local at = 6
for _ = 1, n do
  local index, entries, verdict, result = ARGV[at], tonumber(ARGV[at + 1]), ARGV[at + 2], ARGV[at + 3]
  at = at + 4
  if redis.call('HEXISTS', KEYS[3], index) == 0 then
    local seq = redis.call('HINCRBY', KEYS[1], 'settled', 1)
    local shape = shape_of(result)
    redis.call('HSET', KEYS[3], index, seq .. ':' .. shape)
    unwait(index)
    redis.call('HDEL', KEYS[4], index)
    redis.call('HINCRBY', KEYS[1], 'processed', entries)
    redis.call('HINCRBY', KEYS[1], 's:' .. verdict, entries)
  end
end
while at + 5 <= #ARGV do
  if redis.call('HEXISTS', KEYS[3], ARGV[at]) == 0 then
    unwait(ARGV[at])
    local shape = shape_of(ARGV[at + 4])
    redis.call('HSET', KEYS[4], ARGV[at], ARGV[at + 1] .. ':' .. ARGV[at + 2] .. ':' .. ARGV[at + 3] .. ':' .. shape .. ':' .. ARGV[at + 5])
    redis.call('HINCRBY', KEYS[1], 'w:' .. ARGV[at + 5], ARGV[at + 3])
    local group = ARGV[2] .. ':' .. ARGV[at + 1]
    local due = redis.call('ZSCORE', KEYS[6], group)
    if not due or tonumber(due) > tonumber(ARGV[at + 2]) then redis.call('ZADD', KEYS[6], ARGV[at + 2], group) end
  end
  at = at + 6
end
if tonumber(ARGV[3]) == 0 then
  redis.call('SADD', KEYS[5], ARGV[2])
else
  redis.call('ZREM', KEYS[6], ARGV[2] .. ':' .. ARGV[3])
end
local settled = tonumber(redis.call('HGET', KEYS[1], 'settled'))
local distinct = tonumber(redis.call('HGET', KEYS[1], 'distinct'))
local next_status = status
if settled >= distinct then
  next_status = 'completed'
elseif status == 'running' and redis.call('SCARD', KEYS[5]) >= tonumber(redis.call('HGET', KEYS[1], 'workChunks')) then
  next_status = 'retrying'
end
move(next_status, now, ARGV[4])
return {next_status, 1}
