import { describe, expect, it } from 'vitest';
import { dedupKey } from '../src/index.ts';

describe('dedupKey', () => {
  it('trims and lower-cases the whole address: one contact whatever its case', () => {
    expect(dedupKey(' Bob@Example.COM ')).toBe('bob@example.com');
    expect(dedupKey('USER.12.A@SPEED2.TEST')).toBe(dedupKey('user.12.a@speed2.test'));
    expect(dedupKey('no-at-sign')).toBe('no-at-sign');
  });

  it('keeps what is not case: a quoted local part with an @ stays one key', () => {
    expect(dedupKey('"A@b"@Example.com')).toBe('"a@b"@example.com');
    expect(dedupKey('bob+x@example.com')).not.toBe(dedupKey('bob@example.com'));
  });
});
