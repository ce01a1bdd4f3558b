import { describe, expect, it } from 'vitest';
import type { VerifyResult } from '@svc/contracts';
import { cachedOutcomeSchema, fromCachedOutcome, outcomeCacheKey, toCachedOutcome } from '../../src/cache/cached-outcome.ts';

const result: VerifyResult = {
  email: 'ann.private@gmial.com',
  score: 85,
  verdict: 'deliverable',
  reason: 'accepted_email',
  checks: {
    syntax: true,
    domainExists: true,
    mx: ['mx.gmial.com'],
    smtp: 'accepted',
    catchAll: false,
    disposable: false,
    role: false,
    free: false,
    provider: null,
  },
  didYouMean: 'ann.private@gmail.com',
};

describe('outcome cache at rest', () => {
  it('is keyed by a SHA-256 of the normalised address, never the address', () => {
    const key = outcomeCacheKey('ann.private@gmial.com');
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(key).not.toContain('ann');
    expect(outcomeCacheKey('ann.private@gmial.com')).toBe(key);
    expect(outcomeCacheKey('Ann.private@gmial.com')).not.toBe(key);
  });

  it('stores no address: no email, the suggestion only as its domain; validated by its own schema', () => {
    const cached = toCachedOutcome(result);
    expect(JSON.stringify(cached)).not.toContain('ann');
    expect(cached).toMatchObject({ suggestedDomain: 'gmail.com' });
    expect(cachedOutcomeSchema.safeParse(cached).success).toBe(true);
    expect(cachedOutcomeSchema.safeParse({ ...cached, email: 'ann.private@gmial.com' }).success).toBe(false);
  });

  it('rebuilds the result with the entry’s own address and local part on read', () => {
    expect(fromCachedOutcome(toCachedOutcome(result), ' ann.private@GMIAL.com', 'ann.private')).toEqual({
      ...result,
      email: ' ann.private@GMIAL.com',
    });
    const { didYouMean: _none, ...plain } = result;
    expect(fromCachedOutcome(toCachedOutcome(plain), plain.email, 'ann.private')).toEqual(plain);
  });
});
