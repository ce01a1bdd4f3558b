/**
 * The meter in Redis: one hash per key and month, updated by one script, so that two gateway
 * replicas (or a gateway and a worker) can never both decide that the same call was the last
 * free one. A list's ledger, and a call's charge id, move in the same script as the meter, so on
 * a Redis Cluster they carry the key id as hash tag: `<prefix>:usage:{<keyId>}:<month>`,
 * `<prefix>:ledger:{<keyId>}:<name>`, `<prefix>:charge:{<keyId>}:<charge id>`. A charge id's key
 * holds what its record answered (`calls:billable:used`) or `void`, for CHARGE_ID_TTL_MS; it goes
 * to the replica with the record it belongs to (one script, one replicated unit).
 */
import { readFileSync } from 'node:fs';
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

/** A script of the lua/ folder beside this module, read once at load (the build copies the folder beside the compiled files). */
const lua = (name: string): string => readFileSync(new URL(`./lua/${name}`, import.meta.url), 'utf8');

/** Usage is kept for 400 days: long enough to answer billing questions about last year's months. */
const RETENTION_SECONDS = 400 * 86_400;

/**
 * One call of an operation against the usage hash KEYS[1]; `pool` lists the operations sharing its
 * allowance. The pool and the allowance come in from billing.ts; this only repeats its sum and its
 * comparison (`isBillable`) where they can be made atomically.
 */
const RECORD_ONE = lua('meter-record-one.lua');

/**
 * KEYS[2] is the charge id's key. ARGV: operation, allowance, ttl, give-up time (ms since the
 * epoch, 0: none), charge id ttl (ms), pool... A call that reaches Redis after its gateway gave up
 * on it (a primary frozen, then thawed with the command still in its socket) records nothing: the
 * caller was answered 503, not billed. A charge id already recorded answers its first record
 * again (-2: it was voided), recording nothing.
 */
const RECORD_SCRIPT = RECORD_ONE + lua('meter-record.lua');

/**
 * KEYS[2] is the charge id's key. ARGV: operation, allowance, charge id ttl (ms), pool... Leaves
 * `void` in the charge id's key whatever it held; a call it recorded loses its count and its
 * price, or, if it was free, gives its free place to one of the operation's billed calls when
 * the pool is still at its allowance (billing.ts, voidFreesBilledCall). Answers 1 when it
 * cancelled a record, 0 when there was none (never made, voided already, or forgotten).
 */
const VOID_SCRIPT = RECORD_ONE + lua('meter-void.lua');

/**
 * KEYS[2] is the ledger. ARGV: operation, allowance, ttl, pool..., upTo, addresses. The addresses
 * the ledger gained go to the month's `<operation>:addresses` (usage in addresses).
 */
const RECORD_UNITS_SCRIPT = RECORD_ONE + lua('meter-record-units.lua');

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
