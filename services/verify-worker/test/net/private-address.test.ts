import { describe, expect, it } from 'vitest';
import { filterProbeTargets } from '../../src/net/private-address.ts';

describe('filterProbeTargets: the MX hosts the prober may connect to', () => {
  it('refuses IPv4-compatible (::/96) and every other non-global address an MX may resolve to', () => {
    const refused = [
      '::127.0.0.1',
      '::7f00:1',
      '::10.0.0.1',
      '::a00:1',
      '::ffff:10.0.0.1',
      '127.0.0.1',
      '10.0.0.1',
      'fd00::25',
      '64:ff9b::a00:1',
    ];
    const allowed = ['93.184.215.14', '2a00:1450:400c:c0b::1b'];
    expect(filterProbeTargets([...refused, ...allowed], false)).toEqual({ allowed, refused });
  });

  it('lets everything through when private MX hosts are allowed (test rigs)', () => {
    expect(filterProbeTargets(['::127.0.0.1', '10.0.0.1'], true)).toEqual({ allowed: ['::127.0.0.1', '10.0.0.1'], refused: [] });
  });
});
