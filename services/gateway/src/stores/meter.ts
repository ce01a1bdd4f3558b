/**
 * Usage metering per key, operation and UTC month. A call is metered only after it succeeded;
 * the first `allowance` calls of a month are free, the rest billable.
 */
import type { OperationId } from '@svc/contracts';

export interface Charge {
  /** Calls of this operation this month, this one included. */
  calls: number;
  billable: boolean;
  freeRemaining: number;
}

export interface OperationUsage {
  calls: number;
  billableCalls: number;
}

export interface Meter {
  record(keyId: string, operation: OperationId, period: string, allowance: number): Promise<Charge>;
  usage(keyId: string, period: string): Promise<Partial<Record<OperationId, OperationUsage>>>;
}

export class MemoryMeter implements Meter {
  private readonly counters = new Map<string, OperationUsage>();

  record(keyId: string, operation: OperationId, period: string, allowance: number): Promise<Charge> {
    const slot = `${period}:${keyId}:${operation}`;
    const usage = this.counters.get(slot) ?? { calls: 0, billableCalls: 0 };
    usage.calls += 1;
    const billable = usage.calls > allowance;
    if (billable) usage.billableCalls += 1;
    this.counters.set(slot, usage);
    return Promise.resolve({ calls: usage.calls, billable, freeRemaining: Math.max(0, allowance - usage.calls) });
  }

  usage(keyId: string, period: string): Promise<Partial<Record<OperationId, OperationUsage>>> {
    const out: Partial<Record<OperationId, OperationUsage>> = {};
    const head = `${period}:${keyId}:`;
    for (const [slot, usage] of this.counters) {
      if (slot.startsWith(head)) out[slot.slice(head.length) as OperationId] = { ...usage };
    }
    return Promise.resolve(out);
  }
}
