import { describe, expect, it } from 'vitest';
import { dedupKey } from '../src/index.ts';

describe('dedupKey', () => {
  it('trims and lower-cases the domain, keeping the local part', () => {
    expect(dedupKey(' Bob@Example.COM ')).toBe('Bob@example.com');
    expect(dedupKey('bob@example.com')).not.toBe(dedupKey('Bob@example.com'));
    expect(dedupKey('no-at-sign')).toBe('no-at-sign');
  });

  it('takes the last @ as the separator, as addresses with a quoted local part need', () => {
    expect(dedupKey('"a@b"@Example.com')).toBe('"a@b"@example.com');
  });
});
