import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, effectOf, historyCheck } from '../src/effects.ts';
import { EMPTY_STATE, applyEvent, moveTally, standingOf, type AddressState } from '../src/state.ts';
import type { Outcome } from '../src/events.ts';

const H = 3_600_000;
const now = Date.UTC(2026, 10, 28, 12);
const after = (...events: Array<[Outcome, number]>): AddressState =>
  events.reduce((state, [outcome, hoursAgo]) => applyEvent(state, outcome, now - hoursAgo * H), EMPTY_STATE);

describe('effects of reported events', () => {
  it('a hard bounce is a known bounce until a later delivery or the TTL', () => {
    expect(effectOf(after(['hard_bounce', 1]), now, DEFAULT_SETTINGS)).toBe('known_bounce');
    expect(effectOf(after(['hard_bounce', 10], ['delivered', 100]), now, DEFAULT_SETTINGS)).toBe('known_bounce');
    expect(effectOf(after(['hard_bounce', 100], ['delivered', 80]), now, DEFAULT_SETTINGS)).toBe('delivered');
    expect(effectOf(after(['hard_bounce', 181 * 24]), now, DEFAULT_SETTINGS)).toBe('none');
  });

  it('a complaint makes a complainer unless a later hard bounce', () => {
    expect(effectOf(after(['complaint', 5]), now, DEFAULT_SETTINGS)).toBe('complainer');
    expect(effectOf(after(['complaint', 5], ['hard_bounce', 1]), now, DEFAULT_SETTINGS)).toBe('known_bounce');
    expect(effectOf(after(['hard_bounce', 5], ['complaint', 1]), now, DEFAULT_SETTINGS)).toBe('complainer');
  });

  it('a delivery counts once it stood for the settle time', () => {
    expect(effectOf(after(['delivered', 1]), now, DEFAULT_SETTINGS)).toBe('none');
    expect(effectOf(after(['delivered', 73]), now, DEFAULT_SETTINGS)).toBe('delivered');
    expect(effectOf(after(['delivered', 73]), now, { ...DEFAULT_SETTINGS, deliverySettleMs: 0 })).toBe('delivered');
  });

  it('a soft bounce is counted and changes nothing', () => {
    const state = after(['soft_bounce', 1]);
    expect(effectOf(state, now, DEFAULT_SETTINGS)).toBe('none');
    expect(state.softBounces).toBe(1);
    expect(historyCheck(state)).toEqual({ bounces: 0, deliveries: 0, complaints: 0, lastEventAt: new Date(now - H).toISOString() });
    expect(historyCheck(undefined)).toBeNull();
  });

  it('an address stands by its latest decisive event, once whatever the count', () => {
    expect(standingOf(EMPTY_STATE)).toBe('none');
    expect(standingOf(after(['delivered', 5], ['hard_bounce', 1]))).toBe('bounced');
    expect(standingOf(after(['hard_bounce', 5], ['delivered', 1], ['delivered', 0]))).toBe('delivered');
    expect(moveTally({ delivered: 3, bounced: 1 }, 'bounced', 'delivered')).toEqual({ delivered: 4, bounced: 0 });
    expect(moveTally({ delivered: 3, bounced: 1 }, 'none', 'bounced')).toEqual({ delivered: 3, bounced: 2 });
  });
});
