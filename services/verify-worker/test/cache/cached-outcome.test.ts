import { describe, expect, it } from 'vitest';
import type { VerifyResult } from '@svc/contracts';
import {
  cachedOutcomeSchema,
  decodeCachedOutcome,
  encodeCachedOutcome,
  fromCachedOutcome,
  outcomeCacheKey,
  toCachedOutcome,
} from '../../src/cache/cached-outcome.ts';

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

describe('outcome cache in Redis', () => {
  it('is kept as a compact string, under a fifth of its JSON, and read back whole', () => {
    const cached = toCachedOutcome(result);
    const encoded = encodeCachedOutcome(cached);
    expect(encoded.length).toBeLessThan(JSON.stringify(cached).length / 4);
    expect(encoded).not.toContain('ann');
    expect(decodeCachedOutcome(encoded)).toEqual(cached);
    const { suggestedDomain: _none, ...plain } = cached;
    expect(decodeCachedOutcome(encodeCachedOutcome(plain))).toEqual(plain);
  });

  it('reads nulls, every verdict and reason, and MX hosts holding the separators', () => {
    const odd = toCachedOutcome({
      ...result,
      verdict: 'risky',
      reason: 'unexpected_error',
      checks: {
        ...result.checks,
        domainExists: null,
        mx: ['a|b,c.example', 'x"y.example'],
        smtp: null,
        catchAll: null,
        provider: 'google',
      },
    });
    expect(decodeCachedOutcome(encodeCachedOutcome(odd))).toEqual(odd);
    const nothing = toCachedOutcome({ ...result, checks: { ...result.checks, mx: null, smtp: 'unknown' } });
    expect(decodeCachedOutcome(encodeCachedOutcome(nothing))).toEqual(nothing);
  });

  it('is a miss for what is not a record: a JSON value of an earlier release, a broken one, an unknown reason', () => {
    expect(decodeCachedOutcome(JSON.stringify(toCachedOutcome(result)))).toBeUndefined();
    expect(decodeCachedOutcome('85|00|111000|a|[["mx"]')).toBeUndefined();
    expect(decodeCachedOutcome('85|0z|111000|a|[["mx"],null]')).toBeUndefined();
    expect(decodeCachedOutcome('85|00|111000|a|[["mx"],null,7]')).toBeUndefined();
  });
});
