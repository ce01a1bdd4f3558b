/**
 * The meter in Redis: one hash per key and month, updated by one script, so that two gateway
 * replicas (or a gateway and a worker) can never both decide that the same call was the last
 * free one. A list's ledger, and a call's charge id, move in the same script as the meter, so on
 * a Redis Cluster they carry the key id as hash tag: `<prefix>:usage:{<keyId>}:<month>`,
 * `<prefix>:ledger:{<keyId>}:<name>`, `<prefix>:charge:{<keyId>}:<charge id>`. A charge id's key
 * holds what its record answered (`calls:billable:used`) or `void`, for CHARGE_ID_TTL_MS; it goes
 * to the replica with the record it belongs to (one script, one replicated unit).
 */
import { OPERATION_IDS, type OperationId } from '@svc/contracts';
import type { Redis } from '@svc/jobs/redis';
import { allowancePool, freeRemaining } from './billing.ts';
import {
  CHARGE_ID_TTL_MS,
  MeterLateError,
  MeterUnsureError,
  type Charge,
  type ChargeCall,
  type LedgerState,
  type Meter,
  type OperationUsage,
  type UnitsRecorded,
} from './meter.ts';

/** Usage is kept for 400 days: long enough to answer billing questions about last year's months. */
const RETENTION_SECONDS = 400 * 86_400;

/**
 * One call of an operation against the usage hash KEYS[1]; `pool` lists the operations sharing its
 * allowance. The pool and the allowance come in from billing.ts; this only repeats its sum and its
 * comparison (`isBillable`) where they can be made atomically.
 */
const RECORD_ONE = `
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
`;

/**
 * KEYS[2] is the charge id's key. ARGV: operation, allowance, ttl, give-up time (ms since the
 * epoch, 0: none), charge id ttl (ms), pool... A call that reaches Redis after its gateway gave up
 * on it (a primary frozen, then thawed with the command still in its socket) records nothing: the
 * caller was answered 503, not billed. A charge id already recorded answers its first record
 * again (-2: it was voided), recording nothing.
 */
const RECORD_SCRIPT = `${RECORD_ONE}
local give_up = tonumber(ARGV[4])
if give_up > 0 then
  local now = redis.call('TIME')
  if tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) > give_up then return {-1, 0, 0} end
end
local known = redis.call('GET', KEYS[2])
if known == 'void' then return {-2, 0, 0} end
if known then
  local calls, billable, used = string.match(known, '^(%d+):(%d):(%d+)$')
  return {tonumber(calls), tonumber(billable), tonumber(used)}
end
local pool = pool_from(6, #ARGV)
local calls, billable, used = record_one(ARGV[1], tonumber(ARGV[2]), pool)
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], calls .. ':' .. billable .. ':' .. used, 'PX', ARGV[5])
return {calls, billable, used}
`;

/**
 * KEYS[2] is the charge id's key. ARGV: operation, allowance, charge id ttl (ms), pool... Leaves
 * `void` in the charge id's key whatever it held; a call it recorded loses its count and its
 * price, or, if it was free, gives its free place to one of the operation's billed calls when
 * the pool is still at its allowance (billing.ts, voidFreesBilledCall). Answers 1 when it
 * cancelled a record, 0 when there was none (never made, voided already, or forgotten).
 */
const VOID_SCRIPT = `${RECORD_ONE}
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
`;

/**
 * KEYS[2] is the ledger. ARGV: operation, allowance, ttl, pool..., upTo, addresses. The addresses
 * the ledger gained go to the month's `<operation>:addresses` (usage in addresses).
 */
const RECORD_UNITS_SCRIPT = `${RECORD_ONE}
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
`;

type MeterRedis = Redis & {
  meterRecord(
    key: string,
    chargeKey: string,
    operation: string,
    allowance: number,
    ttl: number,
    giveUpAt: number,
    chargeTtlMs: number,
    ...pool: string[]
  ): Promise<[number, number, number]>;
  meterVoid(key: string, chargeKey: string, operation: string, allowance: number, chargeTtlMs: number, ...pool: string[]): Promise<number>;
  meterRecordUnits(
    key: string,
    ledger: string,
    operation: string,
    allowance: number,
    ttl: number,
    ...rest: Array<string | number>
  ): Promise<[number, number]>;
};

/**
 * Errors after which a command surely never reached Redis: ioredis refused to send it (no
 * connection, no offline queue). Matched by ioredis' messages: one these miss is taken as unsure,
 * which costs a retry or a void of nothing, never a wrong bill.
 */
const NEVER_SENT =
  /^(Stream isn't writeable|Cluster isn't ready) and enableOfflineQueue options is false|^None of startup nodes is available/;

/**
 * Whether a failed command may have run: anything but an error reply of Redis (the script
 * refused before writing) or a command never sent. A connection closed or reset, a command
 * timeout, ioredis' "max retries per request" and a cluster's "too many redirections" all may
 * follow a command that ran.
 */
function mayHaveRun(error: unknown): boolean {
  if (!(error instanceof Error)) return true;
  return error.name !== 'ReplyError' && !NEVER_SENT.test(error.message);
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
    if (!('meterRecord' in redis)) redis.defineCommand('meterRecord', { numberOfKeys: 2, lua: RECORD_SCRIPT });
    if (!('meterVoid' in redis)) redis.defineCommand('meterVoid', { numberOfKeys: 2, lua: VOID_SCRIPT });
    if (!('meterRecordUnits' in redis)) redis.defineCommand('meterRecordUnits', { numberOfKeys: 2, lua: RECORD_UNITS_SCRIPT });
    this.redis = redis as MeterRedis;
  }

  private keyOf(keyId: string, period: string): string {
    return `${this.prefix}:usage:{${keyId}}:${period}`;
  }

  private ledgerKey(ledger: string, keyId: string): string {
    return `${this.prefix}:ledger:{${keyId}}:${ledger}`;
  }

  private chargeKey(keyId: string, chargeId: string): string {
    return `${this.prefix}:charge:{${keyId}}:${chargeId}`;
  }

  async record(call: ChargeCall): Promise<Charge> {
    let answer: [number, number, number];
    try {
      answer = await this.redis.meterRecord(
        this.keyOf(call.keyId, call.period),
        this.chargeKey(call.keyId, call.chargeId),
        call.operation,
        call.allowance,
        RETENTION_SECONDS,
        this.recordWithinMs === undefined ? 0 : Date.now() + this.recordWithinMs,
        CHARGE_ID_TTL_MS,
        ...allowancePool(call.operation),
      );
    } catch (error) {
      throw mayHaveRun(error) ? new MeterUnsureError(error) : error;
    }
    const [calls, billable, used] = answer;
    if (calls < 0) throw new MeterLateError();
    return { calls, billable: billable === 1, freeRemaining: freeRemaining(call.allowance, used) };
  }

  async voidCharge(call: ChargeCall): Promise<boolean> {
    const cancelled = await this.redis.meterVoid(
      this.keyOf(call.keyId, call.period),
      this.chargeKey(call.keyId, call.chargeId),
      call.operation,
      call.allowance,
      CHARGE_ID_TTL_MS,
      ...allowancePool(call.operation),
    );
    return cancelled === 1;
  }

  async recordUnits(
    ledger: string,
    keyId: string,
    operation: OperationId,
    period: string,
    allowance: number,
    upTo: number,
    addresses = 0,
  ): Promise<UnitsRecorded> {
    const [recorded, billable] = await this.redis.meterRecordUnits(
      this.keyOf(keyId, period),
      this.ledgerKey(ledger, keyId),
      operation,
      allowance,
      RETENTION_SECONDS,
      ...allowancePool(operation),
      upTo,
      addresses,
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
      const addresses = Number(fields[`${operation}:addresses`] ?? 0);
      if (calls > 0 || addresses > 0)
        out[operation] = { calls, billableCalls: Number(fields[`${operation}:billable`] ?? 0), ...(addresses > 0 ? { addresses } : {}) };
    }
    return out;
  }
}
