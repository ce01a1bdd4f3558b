/**
 * What is kept of one address for one scope (a key, or the deployment): counts per outcome and
 * the time of the last event of each kind, never the address. The memory store applies
 * `applyEvent` directly; the Redis store's script (redis-store.ts) does the same arithmetic,
 * and one contract test holds both to it.
 */
import type { Outcome } from './events.ts';

export interface AddressState {
  bounces: number;
  softBounces: number;
  deliveries: number;
  complaints: number;
  /** Epoch ms of the latest event of each kind (0: none). */
  lastBounceAt: number;
  lastDeliveredAt: number;
  lastComplaintAt: number;
  lastEventAt: number;
}

export const EMPTY_STATE: AddressState = {
  bounces: 0,
  softBounces: 0,
  deliveries: 0,
  complaints: 0,
  lastBounceAt: 0,
  lastDeliveredAt: 0,
  lastComplaintAt: 0,
  lastEventAt: 0,
};

/**
 * What an address counts as in its domain's tally: its latest decisive event (a hard bounce or a
 * delivery; the later one decides, a bounce on a tie). An address counts once whatever the number
 * of sends, so that a list mailed ten times does not weigh ten times.
 */
export type Standing = 'delivered' | 'bounced' | 'none';

export function standingOf(state: AddressState): Standing {
  if (state.lastBounceAt === 0 && state.lastDeliveredAt === 0) return 'none';
  return state.lastBounceAt >= state.lastDeliveredAt ? 'bounced' : 'delivered';
}

/** Deliveries and hard bounces of distinct addresses (a domain's, or a scope's catch-all domains together). */
export interface Tally {
  delivered: number;
  bounced: number;
}

export const EMPTY_TALLY: Tally = { delivered: 0, bounced: 0 };

export function applyEvent(state: AddressState, outcome: Outcome, at: number): AddressState {
  const next = { ...state, lastEventAt: Math.max(state.lastEventAt, at) };
  switch (outcome) {
    case 'hard_bounce':
      return { ...next, bounces: state.bounces + 1, lastBounceAt: Math.max(state.lastBounceAt, at) };
    case 'delivered':
      return { ...next, deliveries: state.deliveries + 1, lastDeliveredAt: Math.max(state.lastDeliveredAt, at) };
    case 'complaint':
      return { ...next, complaints: state.complaints + 1, lastComplaintAt: Math.max(state.lastComplaintAt, at) };
    case 'soft_bounce':
      return { ...next, softBounces: state.softBounces + 1 };
  }
}

/** A tally after one address moved from one standing to another. */
export function moveTally(tally: Tally, from: Standing, to: Standing): Tally {
  if (from === to) return tally;
  const next = { ...tally };
  if (from === 'delivered') next.delivered -= 1;
  if (from === 'bounced') next.bounced -= 1;
  if (to === 'delivered') next.delivered += 1;
  if (to === 'bounced') next.bounced += 1;
  return next;
}
