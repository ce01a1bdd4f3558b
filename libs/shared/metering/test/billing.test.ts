/**
 * The billing rule on its own (decisions, "Operations, prices, limits" and the list price): who
 * draws on which allowance and how large it is for a key, what calls and units cost, the month.
 */
import { OPERATION_IDS, OPERATIONS, type OperationId } from '@svc/contracts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  allowanceFor,
  allowanceOwner,
  allowancePool,
  billingPeriod,
  costOf,
  freeRemaining,
  isBillable,
  listCharge,
  listUnits,
  monthlyBill,
  poolCalls,
  poolCallsIn,
  priceOf,
  type FreeAllowances,
} from '../src/billing.ts';

const DEFAULTS: FreeAllowances = {
  'email-verify.batch': 10,
  'email-verify.single': 100,
  'qr.generate': 1000,
  'qr.wifi': 1000,
  'email-verify.list': 10,
};

describe('allowances', () => {
  it('list units draw on the batch allowance; every other operation on its own', () => {
    expect(allowanceOwner('email-verify.list')).toBe('email-verify.batch');
    for (const operation of ['email-verify.batch', 'email-verify.single', 'qr.generate', 'qr.wifi'] as const) {
      expect(allowanceOwner(operation)).toBe(operation);
    }
    expect(allowancePool('email-verify.batch')).toEqual(['email-verify.batch', 'email-verify.list']);
    expect(allowancePool('email-verify.list')).toEqual(['email-verify.batch', 'email-verify.list']);
    expect(allowancePool('qr.wifi')).toEqual(['qr.wifi']);
  });

  it('works a pool out once: the same array on every call', () => {
    for (const operation of OPERATION_IDS) expect(allowancePool(operation)).toBe(allowancePool(operation));
  });

  it("a key's own allowance wins over the default, and list units read the batch figure", () => {
    expect(allowanceFor('qr.generate', {}, DEFAULTS)).toBe(1000);
    expect(allowanceFor('qr.generate', { 'qr.generate': 5 }, DEFAULTS)).toBe(5);
    expect(allowanceFor('qr.generate', { 'qr.generate': 0 }, DEFAULTS)).toBe(0);
    expect(allowanceFor('qr.generate', { 'qr.wifi': 5 }, DEFAULTS)).toBe(1000);
    expect(allowanceFor('email-verify.list', { 'email-verify.batch': 3 }, DEFAULTS)).toBe(3);
    // A figure set on the list operation itself is not the batch allowance its units draw on.
    expect(allowanceFor('email-verify.list', { 'email-verify.list': 50 }, DEFAULTS)).toBe(10);
  });

  it('sums a pool, bills past the allowance and never reports less than nothing left', () => {
    const usage = { 'email-verify.batch': { calls: 4 }, 'email-verify.list': { calls: 3 }, 'qr.generate': { calls: 9 } };
    expect(poolCallsIn('email-verify.batch', usage)).toBe(7);
    expect(poolCallsIn('email-verify.list', usage)).toBe(7);
    expect(poolCallsIn('email-verify.single', usage)).toBe(0);
    const counted = new Map<OperationId, number>([
      ['email-verify.batch', 1],
      ['email-verify.list', 2],
      ['qr.generate', 9],
    ]);
    expect(poolCalls('email-verify.list', (member) => counted.get(member) ?? 0)).toBe(3);
    expect([isBillable(3, 3), isBillable(3, 4), isBillable(0, 1)]).toEqual([false, true, true]);
    expect([freeRemaining(10, 7), freeRemaining(10, 10), freeRemaining(3, 8)]).toEqual([3, 0, 0]);
  });
});

describe('prices and units', () => {
  it('prices every operation from the table', () => {
    for (const operation of OPERATION_IDS) expect(priceOf(operation)).toBe(OPERATIONS[operation].priceMicroUsd);
    expect(costOf('email-verify.batch', 2)).toBe(300_000);
    expect(costOf('email-verify.single', 1)).toBe(3_000);
    expect(costOf('qr.wifi', 0)).toBe(0);
    expect(costOf('email-verify.list', 115)).toBe(17_250_000);
  });

  it('bills a list per started hundred processed distinct addresses', () => {
    expect([0, 1, 100, 101, 200, 100_000].map(listUnits)).toEqual([0, 1, 1, 2, 2, 1000]);
  });
});

describe('billingPeriod', () => {
  afterEach(() => vi.useRealTimers());

  it('is the UTC month of a given date', () => {
    expect(billingPeriod(new Date('2026-11-30T23:59:59.999Z'))).toBe('2026-11');
    expect(billingPeriod(new Date('2026-12-01T00:00:00.000Z'))).toBe('2026-12');
  });

  it("follows the clock across a month's end, both ways", () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-30T23:59:59.999Z'));
    expect(billingPeriod()).toBe('2026-11');
    vi.setSystemTime(new Date('2026-12-01T00:00:00.000Z'));
    expect(billingPeriod()).toBe('2026-12');
    vi.setSystemTime(new Date('2026-10-15T12:00:00.000Z'));
    expect(billingPeriod()).toBe('2026-10');
  });
});

describe('monthlyBill', () => {
  it('lists every operation with its pool, allowance, unit price and cost, each allowance once, and the total', () => {
    const usage = {
      'email-verify.batch': { calls: 12, billableCalls: 2 },
      'email-verify.list': { calls: 5, billableCalls: 5, addresses: 412 },
      'qr.generate': { calls: 1500, billableCalls: 500 },
    };
    const bill = monthlyBill(usage, { 'qr.generate': 2000 }, DEFAULTS);
    expect(Object.keys(bill.operations)).toEqual([...OPERATION_IDS]);
    const own = (operation: OperationId) => ({ priceMicroUsd: OPERATIONS[operation].priceMicroUsd, allowanceFrom: operation });
    expect(bill.operations).toEqual({
      'email-verify.batch': { calls: 12, billableCalls: 2, freeRemaining: 0, costMicroUsd: 300_000, ...own('email-verify.batch') },
      'email-verify.single': { calls: 0, billableCalls: 0, freeRemaining: 100, costMicroUsd: 0, ...own('email-verify.single') },
      // The billable calls were counted under the allowance of the time; what is left follows the key's figure now.
      'qr.generate': { calls: 1500, billableCalls: 500, freeRemaining: 500, costMicroUsd: 250_000, ...own('qr.generate') },
      'qr.wifi': { calls: 0, billableCalls: 0, freeRemaining: 1000, costMicroUsd: 0, ...own('qr.wifi') },
      'email-verify.list': {
        calls: 5,
        billableCalls: 5,
        freeRemaining: 0,
        costMicroUsd: 750_000,
        priceMicroUsd: 150_000,
        allowanceFrom: 'email-verify.batch',
        addresses: 412,
      },
    });
    expect(bill.allowances).toEqual([
      { operations: ['email-verify.batch', 'email-verify.list'], allowance: 10, used: 17, remaining: 0 },
      { operations: ['email-verify.single'], allowance: 100, used: 0, remaining: 100 },
      { operations: ['qr.generate'], allowance: 2000, used: 1500, remaining: 500 },
      { operations: ['qr.wifi'], allowance: 1000, used: 0, remaining: 1000 },
    ]);
    expect(bill.totalMicroUsd).toBe(1_300_000);
  });
});

describe('listCharge', () => {
  it('quotes what a list will be charged after the allowance left, beside the undiscounted price', () => {
    // The two cases: 294 addresses inside a fresh allowance cost $0; 2,000 with 2 units left cost 18 units.
    expect(listCharge(294, 10)).toEqual({ units: 3, billableUnits: 0, chargeMicroUsd: 0, undiscountedMicroUsd: 450_000 });
    expect(listCharge(2_000, 2)).toEqual({ units: 20, billableUnits: 18, chargeMicroUsd: 2_700_000, undiscountedMicroUsd: 3_000_000 });
    expect(listCharge(0, 0).units).toBe(0);
  });
});
