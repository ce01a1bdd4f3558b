/**
 * The price the console quotes before `Verify list`: what the list will be charged given the key's
 * free units left this month (the batch allowance, which list units share), and the price without
 * them; the figures of the issue: 300 rows on a fresh key cost $0, 2,000 with one free unit $2.85.
 */
import { describe, expect, it } from 'vitest';
import { chargeOf } from '../src/csv.ts';

describe('the price after the free allowance', () => {
  it('charges the units the allowance does not cover', () => {
    expect(chargeOf(294, 10)).toEqual({ units: 3, free: 3, price: '$0.00', full: '$0.45' });
    expect(chargeOf(2000, 1)).toEqual({ units: 20, free: 1, price: '$2.85', full: '$3.00' });
    expect(chargeOf(2000, 0)).toEqual({ units: 20, free: 0, price: '$3.00', full: '$3.00' });
    expect(chargeOf(101, 1)).toEqual({ units: 2, free: 1, price: '$0.15', full: '$0.30' });
    expect(chargeOf(0, 10)).toEqual({ units: 0, free: 0, price: '$0.00', full: '$0.00' });
  });

  it('quotes the full price when the allowance is unknown', () => {
    expect(chargeOf(250, undefined)).toEqual({ units: 3, free: 0, price: '$0.45', full: '$0.45' });
  });
});
