/**
 * Usage metering per key, operation and UTC month. A call is metered only after it succeeded;
 * the first `allowance` calls of a month are free, the rest billable. Operations that share a
 * free allowance (list units draw on the batch allowance) count against it together. What is
 * free, shared and billable is decided in billing.ts; the meters only count.
 *
 * List units are billed through a ledger: one counter per list of the units already recorded,
 * moved in the same atomic step as the meter, so that recording "units 1..n" again after a crash
 * or a retried job records nothing twice.
 */
import type { OperationId } from '@svc/contracts';
import { freeRemaining, isBillable, poolCalls } from './billing.ts';

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

export interface Meter {
  record(keyId: string, operation: OperationId, period: string, allowance: number): Promise<Charge>;
  usage(keyId: string, period: string): Promise<Partial<Record<OperationId, OperationUsage>>>;
  /**
   * Records units `1..upTo` of `ledger` as calls of `operation`, each exactly once over the
   * ledger's life: units the ledger already holds are skipped.
   */
  recordUnits(
    ledger: string,
    keyId: string,
    operation: OperationId,
    period: string,
    allowance: number,
    upTo: number,
  ): Promise<UnitsRecorded>;
  /** `keyId` is the key the ledger's units were recorded for (in Redis they share its slot). */
  ledger(ledger: string, keyId: string): Promise<LedgerState>;
}

export class MemoryMeter implements Meter {
  private readonly counters = new Map<string, OperationUsage>();
  private readonly ledgers = new Map<string, LedgerState>();

  record(keyId: string, operation: OperationId, period: string, allowance: number): Promise<Charge> {
    return Promise.resolve(this.recordSync(keyId, operation, period, allowance));
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
  ): Promise<UnitsRecorded> {
    // Synchronous from here to the end: nothing else runs between reading and moving the ledger.
    const state = this.ledgers.get(ledger) ?? { units: 0, billableUnits: 0 };
    const outcome = { recorded: 0, billable: 0 };
    for (let unit = state.units + 1; unit <= upTo; unit += 1) {
      outcome.recorded += 1;
      if (this.recordSync(keyId, operation, period, allowance).billable) outcome.billable += 1;
    }
    this.ledgers.set(ledger, { units: Math.max(state.units, upTo), billableUnits: state.billableUnits + outcome.billable });
    return Promise.resolve(outcome);
  }

  ledger(ledger: string, _keyId?: string): Promise<LedgerState> {
    return Promise.resolve({ ...(this.ledgers.get(ledger) ?? { units: 0, billableUnits: 0 }) });
  }
}
