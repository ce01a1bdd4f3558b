/**
 * The meter in Redis: one hash per key and month, updated by one script, so that two gateway
 * replicas (or a gateway and a worker) can never both decide that the same call was the last
 * free one. A list's ledger moves in the same script as the meter, so on a Redis Cluster both
 * carry the key id as hash tag: `<prefix>:usage:{<keyId>}:<month>`, `<prefix>:ledger:{<keyId>}:<name>`.
 */
import { OPERATION_IDS, type OperationId } from '@svc/contracts';
import type { Redis } from '@svc/jobs/redis';
import { allowancePool, freeRemaining } from './billing.ts';
import type { Charge, LedgerState, Meter, OperationUsage, UnitsRecorded } from './meter.ts';

/** Usage is kept for 400 days: long enough to answer billing questions about last year's months. */
const RETENTION_SECONDS = 400 * 86_400;

/**
 * One call of an operation against the usage hash KEYS[1]; `pool` lists the operations sharing its
 * allowance. The pool and the allowance come in from billing.ts; this only repeats its sum and its
 * comparison (`isBillable`) where they can be made atomically.
 */
const RECORD_ONE = `
local function record_one(operation, allowance, pool)
  local calls = redis.call('HINCRBY', KEYS[1], operation .. ':calls', 1)
  local used = 0
  for _, member in ipairs(pool) do
    used = used + tonumber(redis.call('HGET', KEYS[1], member .. ':calls') or '0')
  end
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
`;

/**
 * ARGV: operation, allowance, ttl, give-up time (ms since the epoch, 0: none), pool... A call
 * that reaches Redis after its gateway gave up on it (a primary frozen, then thawed with the
 * command still in its socket) records nothing: the caller was answered 503, not billed.
 */
const RECORD_SCRIPT = `${RECORD_ONE}
local give_up = tonumber(ARGV[4])
if give_up > 0 then
  local now = redis.call('TIME')
  if tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) > give_up then return {-1, 0, 0} end
end
local pool = pool_from(5, #ARGV)
local calls, billable, used = record_one(ARGV[1], tonumber(ARGV[2]), pool)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {calls, billable, used}
`;

/** KEYS[2] is the ledger. ARGV: operation, allowance, ttl, pool..., upTo. */
const RECORD_UNITS_SCRIPT = `${RECORD_ONE}
local up_to = tonumber(ARGV[#ARGV])
local pool = pool_from(4, #ARGV - 1)
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
`;

type MeterRedis = Redis & {
  meterRecord(
    key: string,
    operation: string,
    allowance: number,
    ttl: number,
    giveUpAt: number,
    ...pool: string[]
  ): Promise<[number, number, number]>;
  meterRecordUnits(
    key: string,
    ledger: string,
    operation: string,
    allowance: number,
    ttl: number,
    ...rest: Array<string | number>
  ): Promise<[number, number]>;
};

/** The record reached Redis after its sender had given up on it, and was not made. */
export class MeterLateError extends Error {
  constructor() {
    super('the call reached the meter after its sender gave up on it; not recorded');
    this.name = 'MeterLateError';
  }
}

export class RedisMeter implements Meter {
  private readonly redis: MeterRedis;

  /**
   * `recordWithinMs`: a call's record that reaches Redis later than this after it was sent is
   * refused there (half the command timeout leaves the answer time to come back before the
   * sender gives up and answers 503). Undefined: no limit.
   */
  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly recordWithinMs?: number,
  ) {
    if (!('meterRecord' in redis)) redis.defineCommand('meterRecord', { numberOfKeys: 1, lua: RECORD_SCRIPT });
    if (!('meterRecordUnits' in redis)) redis.defineCommand('meterRecordUnits', { numberOfKeys: 2, lua: RECORD_UNITS_SCRIPT });
    this.redis = redis as MeterRedis;
  }

  private keyOf(keyId: string, period: string): string {
    return `${this.prefix}:usage:{${keyId}}:${period}`;
  }

  private ledgerKey(ledger: string, keyId: string): string {
    return `${this.prefix}:ledger:{${keyId}}:${ledger}`;
  }

  async record(keyId: string, operation: OperationId, period: string, allowance: number): Promise<Charge> {
    const [calls, billable, used] = await this.redis.meterRecord(
      this.keyOf(keyId, period),
      operation,
      allowance,
      RETENTION_SECONDS,
      this.recordWithinMs === undefined ? 0 : Date.now() + this.recordWithinMs,
      ...allowancePool(operation),
    );
    if (calls < 0) throw new MeterLateError();
    return { calls, billable: billable === 1, freeRemaining: freeRemaining(allowance, used) };
  }

  async recordUnits(
    ledger: string,
    keyId: string,
    operation: OperationId,
    period: string,
    allowance: number,
    upTo: number,
  ): Promise<UnitsRecorded> {
    const [recorded, billable] = await this.redis.meterRecordUnits(
      this.keyOf(keyId, period),
      this.ledgerKey(ledger, keyId),
      operation,
      allowance,
      RETENTION_SECONDS,
      ...allowancePool(operation),
      upTo,
    );
    return { recorded, billable };
  }

  async ledger(ledger: string, keyId: string): Promise<LedgerState> {
    const [units, billable] = await this.redis.hmget(this.ledgerKey(ledger, keyId), 'units', 'billable');
    return { units: Number(units ?? 0), billableUnits: Number(billable ?? 0) };
  }

  async usage(keyId: string, period: string): Promise<Partial<Record<OperationId, OperationUsage>>> {
    const fields = await this.redis.hgetall(this.keyOf(keyId, period));
    const out: Partial<Record<OperationId, OperationUsage>> = {};
    for (const operation of OPERATION_IDS) {
      const calls = Number(fields[`${operation}:calls`] ?? 0);
      if (calls > 0) out[operation] = { calls, billableCalls: Number(fields[`${operation}:billable`] ?? 0) };
    }
    return out;
  }
}
