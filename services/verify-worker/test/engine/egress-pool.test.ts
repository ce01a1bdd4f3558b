import { describe, expect, it } from 'vitest';
import { EgressPool, SET_ASIDE_MS, egressesOf } from '../../src/engine/egress-pool.ts';

describe('the egress pool', () => {
  it('labels each egress without credentials; no proxy is the direct egress', () => {
    expect(egressesOf(undefined)).toEqual([{ label: 'direct' }]);
    expect(egressesOf(['socks5://user:secret@10.0.0.1:1080', 'socks5://10.0.0.2']).map((egress) => egress.label)).toEqual([
      '10.0.0.1:1080',
      '10.0.0.2:1080',
    ]);
  });

  it('spreads sessions round robin', () => {
    const pool = new EgressPool(['socks5://a:1', 'socks5://b:1', 'socks5://c:1']);
    expect([1, 2, 3, 4].map(() => pool.pick('google').label)).toEqual(['a:1', 'b:1', 'c:1', 'a:1']);
  });

  it('sets an egress aside for one provider for 30 minutes; others keep it', () => {
    let now = 0;
    const pool = new EgressPool(['socks5://a:1', 'socks5://b:1'], { now: () => now });
    const [a] = pool.egresses;
    expect(pool.setAside(a!, 'google')).toBe(true);
    expect([1, 2, 3].map(() => pool.pick('google').label)).toEqual(['b:1', 'b:1', 'b:1']);
    expect(new Set([1, 2].map(() => pool.pick('microsoft').label))).toEqual(new Set(['a:1', 'b:1']));
    expect(pool.setAsideCounts()).toEqual(
      new Map([
        ['a:1', 1],
        ['b:1', 0],
      ]),
    );
    now += SET_ASIDE_MS;
    expect(new Set([1, 2].map(() => pool.pick('google').label))).toEqual(new Set(['a:1', 'b:1']));
    expect(pool.setAsideCounts()).toEqual(
      new Map([
        ['a:1', 0],
        ['b:1', 0],
      ]),
    );
  });

  it('with one egress nothing is ever set aside', () => {
    const pool = new EgressPool(['socks5://a:1']);
    expect(pool.setAside(pool.egresses[0]!, 'google')).toBe(false);
    expect(pool.pick('google').label).toBe('a:1');
  });

  it('when every egress is set aside, the one free again soonest; closed egresses only when no open one is left', () => {
    let now = 0;
    const closed = new Set(['b:1']);
    const pool = new EgressPool(['socks5://a:1', 'socks5://b:1', 'socks5://c:1'], {
      now: () => now,
      isOpen: (egress) => !closed.has(egress.label),
    });
    expect(new Set([1, 2, 3, 4].map(() => pool.pick('yahoo').label))).toEqual(new Set(['a:1', 'c:1']));
    const [a, b, c] = pool.egresses;
    pool.setAside(c!, 'yahoo');
    now += 1;
    pool.setAside(a!, 'yahoo');
    expect(pool.pick('yahoo').label).toBe('b:1');
    pool.setAside(b!, 'yahoo');
    expect(pool.pick('yahoo').label).toBe('c:1');
    expect(pool.hasAlternative(a!, 'yahoo')).toBe(false);
  });
});
