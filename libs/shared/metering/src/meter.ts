/**
 * Usage metering per key, operation and UTC month. A call is metered only after it succeeded;
 * the first `allowance` calls of a month are free, the rest billable. Operations that share a
 * free allowance (list units draw on the batch allowance) count against it together. What is
 * free, shared and billable is decided in billing.ts; the meters only count.
 *
 * List units are billed through a ledger: one counter per list of the units already recorded,
 * moved in the same atomic step as the meter, so that recording "units 1..n" again after a crash
 * or a retried job records nothing twice.
 *
 * A call is recorded under a charge id of its own (charge-recorder.ts makes one per call), so that
 * sending its record again after an answer was lost records nothing twice, and a record that may
 * have been made without its call being answered can be voided (`voidCharge`).
 */
import type { OperationId } from '@svc/contracts';
import { freeRemaining, isBillable, poolCalls, voidFreesBilledCall } from './billing.ts';
import { LRUCache } from 'lru-cache';

/**
 * How long a meter remembers a charge id: a record sent again, or voided, later than this after it
 * was made is not recognised. Far longer than a failover takes (the deployment files fail a
 * primary over within about 10 s), short enough that the ids kept stay small (bench:meter).
 */
export const CHARGE_ID_TTL_MS = 5 * 60_000;

export interface Charge {
  /** Calls of this operation this month, this one included. */
  calls: number;
  billable: boolean;
  /** Left in the allowance this operation draws on (shared with the operations of its pool). */
  freeRemaining: number;
}

export interface OperationUsage {
  calls: number;
  billableCalls: number;
  /** List operations: the distinct addresses processed this month (their units are the calls). */
  addresses?: number;
}

export interface UnitsRecorded {
  /** Units newly recorded by this call (0 when the ledger already had them). */
  recorded: number;
  /** Of those, how many were billable (past the free allowance). */
  billable: number;
}

export interface LedgerState {
  units: number;
  billableUnits: number;
}

/**
 * The record reached the store after its sender had given up on it (or after its charge was
 * voided), and was not made.
 */
export class MeterLateError extends Error {
  constructor() {
    super('the call reached the meter after its sender gave up on it; not recorded');
    this.name = 'MeterLateError';
  }
}

/**
 * The meter cannot tell whether the record was made: the command may have reached the store and
 * its answer been lost (a connection closed or reset, a command timeout). Sending the same charge
 * again is harmless; if it cannot be confirmed, the charge must be voided.
 */
export class MeterUnsureError extends Error {
  constructor(cause: unknown) {
    super('the meter record may or may not have been made: its answer was lost', { cause });
    this.name = 'MeterUnsureError';
  }
}

/** One call to record: whose, of what, in which month, against which allowance, under which charge id. */
export interface ChargeCall {
  keyId: string;
  operation: OperationId;
  period: string;
  allowance: number;
  chargeId: string;
}

export interface Meter {
  /**
   * Records one call, once per charge id (for `CHARGE_ID_TTL_MS`): asked again with the same id it
   * records nothing and answers the first record's charge. Throws MeterUnsureError when it cannot
   * tell whether the record was made.
   */
  record(call: ChargeCall): Promise<Charge>;
  /**
   * Cancels the call recorded under `call.chargeId`, if it was recorded and not voided yet, and
   * answers whether it did: its count goes, its price too, and the free place it held goes back
   * to the allowance (to a later call billed for want of it, if any). The id is remembered as
   * voided: a record of it arriving afterwards records nothing.
   */
  voidCharge(call: ChargeCall): Promise<boolean>;
  usage(keyId: string, period: string): Promise<Partial<Record<OperationId, OperationUsage>>>;
  /**
   * Records units `1..upTo` of `ledger` as calls of `operation`, each exactly once over the
   * ledger's life: units the ledger already holds are skipped. `addresses`, the distinct
   * addresses the ledger's units were started by so far, is counted the same way (what it adds to
   * the ledger's count goes to the month's `addresses` of `operation`), for usage in addresses.
   */
  recordUnits(
    ledger: string,
    keyId: string,
    operation: OperationId,
    period: string,
    allowance: number,
    upTo: number,
    addresses?: number,
  ): Promise<UnitsRecorded>;
  /** `keyId` is the key the ledger's units were recorded for (in Redis they share its slot). */
  ledger(ledger: string, keyId: string): Promise<LedgerState>;
}

/**
 * Most charge ids the memory meter remembers. In process a record is never unsure (nothing lies
 * between the gateway and this meter), so no id is sent again nor voided in production; the ids
 * are kept for the interface's sake, and bounded, since an embedded gateway at a few thousand
 * calls a second would otherwise hold a million of them for CHARGE_ID_TTL_MS (hundreds of MB, and
 * the garbage collector's time walking them: `npm run bench:qr`, embedded).
 */
export const MEMORY_CHARGE_IDS = 10_000;

export class MemoryMeter implements Meter {
  private readonly counters = new Map<string, OperationUsage>();
  private readonly ledgers = new Map<string, LedgerState & { addresses: number }>();
  /**
   * What each charge id recorded, or `void`: the `maxChargeIds` most recently used, for
   * CHARGE_ID_TTL_MS. lru-cache, not a Map pruned from its oldest end: a Map iterates over the
   * places of the entries deleted from its front until it is rebuilt, so each pruning of 10,000
   * ids walked thousands of dead places (about 6.5 us per call, a tenth of the embedded gateway's
   * CPU under `npm run bench:qr`).
   */
  private readonly charges: LRUCache<string, Charge | 'void'>;

  constructor(maxChargeIds = MEMORY_CHARGE_IDS) {
    this.charges = new LRUCache({ max: maxChargeIds, ttl: CHARGE_ID_TTL_MS });
  }

  record(call: ChargeCall): Promise<Charge> {
    const known = this.charges.get(call.chargeId);
    if (known === 'void') return Promise.reject(new MeterLateError());
    if (known !== undefined) return Promise.resolve({ ...known });
    const charge = this.recordSync(call.keyId, call.operation, call.period, call.allowance);
    this.charges.set(call.chargeId, charge);
    return Promise.resolve({ ...charge });
  }

  voidCharge(call: ChargeCall): Promise<boolean> {
    const known = this.charges.get(call.chargeId);
    // The tombstone is set anew: it is remembered as long as a new record would be.
    this.charges.set(call.chargeId, 'void');
    if (known === undefined || known === 'void') return Promise.resolve(false);
    const usage = this.slot(call.period, call.keyId, call.operation);
    usage.calls -= 1;
    const used = poolCalls(call.operation, (member) => this.slot(call.period, call.keyId, member).calls);
    if ((known.billable || voidFreesBilledCall(call.allowance, used)) && usage.billableCalls > 0) usage.billableCalls -= 1;
    return Promise.resolve(true);
  }

  private recordSync(keyId: string, operation: OperationId, period: string, allowance: number): Charge {
    const usage = this.slot(period, keyId, operation);
    usage.calls += 1;
    const used = poolCalls(operation, (member) => this.slot(period, keyId, member).calls);
    const billable = isBillable(allowance, used);
    if (billable) usage.billableCalls += 1;
    return { calls: usage.calls, billable, freeRemaining: freeRemaining(allowance, used) };
  }

  private slot(period: string, keyId: string, operation: OperationId): OperationUsage {
    const name = `${period}:${keyId}:${operation}`;
    let usage = this.counters.get(name);
    if (usage === undefined) {
      usage = { calls: 0, billableCalls: 0 };
      this.counters.set(name, usage);
    }
    return usage;
  }

  usage(keyId: string, period: string): Promise<Partial<Record<OperationId, OperationUsage>>> {
    const out: Partial<Record<OperationId, OperationUsage>> = {};
    const head = `${period}:${keyId}:`;
    for (const [slot, usage] of this.counters) {
      if (slot.startsWith(head) && usage.calls > 0) out[slot.slice(head.length) as OperationId] = { ...usage };
    }
    return Promise.resolve(out);
  }

  recordUnits(
    ledger: string,
    keyId: string,
    operation: OperationId,
    period: string,
    allowance: number,
    upTo: number,
    addresses = 0,
  ): Promise<UnitsRecorded> {
    // Synchronous from here to the end: nothing else runs between reading and moving the ledger.
    const state = this.ledgers.get(ledger) ?? { units: 0, billableUnits: 0, addresses: 0 };
    const outcome = { recorded: 0, billable: 0 };
    for (let unit = state.units + 1; unit <= upTo; unit += 1) {
      outcome.recorded += 1;
      if (this.recordSync(keyId, operation, period, allowance).billable) outcome.billable += 1;
    }
    if (addresses > state.addresses) {
      const usage = this.slot(period, keyId, operation);
      usage.addresses = (usage.addresses ?? 0) + addresses - state.addresses;
    }
    this.ledgers.set(ledger, {
      units: Math.max(state.units, upTo),
      billableUnits: state.billableUnits + outcome.billable,
      addresses: Math.max(state.addresses, addresses),
    });
    return Promise.resolve(outcome);
  }

  ledger(ledger: string, _keyId?: string): Promise<LedgerState> {
    const state = this.ledgers.get(ledger);
    return Promise.resolve({ units: state?.units ?? 0, billableUnits: state?.billableUnits ?? 0 });
  }
}
