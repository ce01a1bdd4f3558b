local up_to = tonumber(ARGV[#ARGV - 1])
local addresses = tonumber(ARGV[#ARGV])
local pool = pool_from(4, #ARGV - 2)
local had_addresses = tonumber(redis.call('HGET', KEYS[2], 'addresses') or '0')
if addresses > had_addresses then
  redis.call('HINCRBY', KEYS[1], ARGV[1] .. ':addresses', addresses - had_addresses)
  redis.call('HSET', KEYS[2], 'addresses', addresses)
  redis.call('EXPIRE', KEYS[1], ARGV[3])
end
local have = tonumber(redis.call('HGET', KEYS[2], 'units') or '0')
local recorded, billable_units = 0, 0
for unit = have + 1, up_to do
  local _, billable = record_one(ARGV[1], tonumber(ARGV[2]), pool)
  recorded = recorded + 1
  billable_units = billable_units + billable
end
if recorded > 0 then
  redis.call('HSET', KEYS[2], 'units', up_to)
  redis.call('HINCRBY', KEYS[2], 'billable', billable_units)
  redis.call('EXPIRE', KEYS[1], ARGV[3])
end
redis.call('EXPIRE', KEYS[2], ARGV[3])
return {recorded, billable_units}
