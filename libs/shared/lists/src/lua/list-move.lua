local function move(status, now, event_id)
  local current = redis.call('HGET', KEYS[1], 'status')
  if status == current then return end
  redis.call('HSET', KEYS[1], 'status', status)
  if status ~= 'running' then redis.call('ZREM', KEYS[2], redis.call('HGET', KEYS[1], 'id')) end
  if status == 'completed' or status == 'cancelled' or status == 'failed' then
    redis.call('HSET', KEYS[1], 'completedAt', now, 'eventId', event_id)
  end
end
local function is_ended(status) return status == 'completed' or status == 'cancelled' or status == 'failed' end
