import { describe, expect, it } from 'vitest';
import { egressOpen, resolverTrusted } from '../../src/health/canary-rule.ts';

describe('canary rules', () => {
  it('trusts the resolver while at least half of the canaries resolve to an MX set', () => {
    expect(resolverTrusted(3, 3)).toBe(true);
    expect(resolverTrusted(2, 3)).toBe(true);
    expect(resolverTrusted(1, 3)).toBe(false);
    expect(resolverTrusted(0, 3)).toBe(false);
    expect(resolverTrusted(1, 2)).toBe(true);
    expect(resolverTrusted(0, 1)).toBe(false);
    expect(resolverTrusted(0, 0)).toBe(true);
  });

  it('takes port 25 as open while one canary mail server accepts, or while none is known', () => {
    expect(egressOpen(1, 3)).toBe(true);
    expect(egressOpen(0, 3)).toBe(false);
    expect(egressOpen(0, 0)).toBe(true);
  });
});
