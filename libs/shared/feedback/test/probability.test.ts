import { describe, expect, it } from 'vitest';
import { brier, catchAllProbability, priorMean, roundProbability, scoreWithProbability, scopeRate } from '../src/probability.ts';

describe('catch-all probability (Beta-binomial, shrunk towards the key rate)', () => {
  it('is the prior mean without any data', () => {
    expect(priorMean()).toBe(0.75);
    expect(catchAllProbability({ delivered: 0, bounced: 0 }, { delivered: 0, bounced: 0 })).toBe(0.75);
  });

  it('moves with the domain and is shrunk towards the key rate', () => {
    const overall = { delivered: 50, bounced: 50 };
    const m = scopeRate(overall);
    expect(m).toBeCloseTo(53 / 104, 10);
    const good = catchAllProbability({ delivered: 30, bounced: 0 }, overall);
    const bad = catchAllProbability({ delivered: 0, bounced: 30 }, overall);
    expect(good).toBeGreaterThan(0.85);
    expect(good).toBeLessThan(1);
    expect(bad).toBeLessThan(0.15);
    expect(bad).toBeGreaterThan(0);
    // Few reports move it little; many move it most of the way.
    expect(catchAllProbability({ delivered: 0, bounced: 1 }, overall)).toBeGreaterThan(0.4);
  });

  it('scores accept_all results within the risky band, unchanged at the prior', () => {
    expect(scoreWithProbability(60, 0.75)).toBe(60);
    expect(scoreWithProbability(60, 1)).toBe(70);
    expect(scoreWithProbability(60, 0)).toBe(30);
    expect(scoreWithProbability(78, 1)).toBe(79);
    expect(roundProbability(0.12345)).toBe(0.12);
  });

  it('computes the Brier score', () => {
    expect(
      brier([
        { p: 1, delivered: true },
        { p: 0, delivered: false },
      ]),
    ).toBe(0);
    expect(brier([{ p: 0.5, delivered: true }])).toBe(0.25);
  });
});
