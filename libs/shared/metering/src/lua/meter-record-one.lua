local function pool_calls(pool)
  local used = 0
  for _, member in ipairs(pool) do
    used = used + tonumber(redis.call('HGET', KEYS[1], member .. ':calls') or '0')
  end
  return used
end
local function record_one(operation, allowance, pool)
  local calls = redis.call('HINCRBY', KEYS[1], operation .. ':calls', 1)
  local used = pool_calls(pool)
  local billable = 0
  if used > allowance then
    billable = 1
    redis.call('HINCRBY', KEYS[1], operation .. ':billable', 1)
  end
  return calls, billable, used
end
local function pool_from(first, last)
  local pool = {}
  for i = first, last do pool[#pool + 1] = ARGV[i] end
  return pool
end
