/**
 * What an address's reported history does to a later verification of it (decisions, "Learning
 * from sends"): the rules alone, on a state and a clock; the verifier applies the answer.
 */
import type { AddressState } from './state.ts';

export interface FeedbackSettings {
  /** How long a hard bounce decides (FEEDBACK_BOUNCE_TTL_DAYS). */
  bounceTtlMs: number;
  /** How long a delivery must stand without a later bounce to count (FEEDBACK_DELIVERY_SETTLE_H). */
  deliverySettleMs: number;
  /** How long anything is kept (HISTORY_RETENTION_DAYS). */
  retentionMs: number;
}

export const DEFAULT_SETTINGS: FeedbackSettings = {
  bounceTtlMs: 180 * 86_400_000,
  deliverySettleMs: 72 * 3_600_000,
  retentionMs: 365 * 86_400_000,
};

/** `checks.history` of a result. */
export interface HistoryCheck {
  bounces: number;
  deliveries: number;
  complaints: number;
  lastEventAt: string;
}

export function historyCheck(state: AddressState | undefined): HistoryCheck | null {
  if (state === undefined || state.lastEventAt === 0) return null;
  return {
    bounces: state.bounces,
    deliveries: state.deliveries,
    complaints: state.complaints,
    lastEventAt: new Date(state.lastEventAt).toISOString(),
  };
}

/**
 * - `known_bounce`: the latest hard bounce is later than any delivery and any complaint, and
 *   younger than the bounce TTL: no probe is made.
 * - `complainer`: a complaint, unless a later hard bounce made it a known bounce.
 * - `delivered`: the latest delivery is later than any hard bounce and has stood for the settle
 *   time (a bounce can follow a delivery report by days); only a catch-all answer gives way to it.
 */
export type Effect = 'known_bounce' | 'complainer' | 'delivered' | 'none';

export function effectOf(state: AddressState | undefined, now: number, settings: FeedbackSettings): Effect {
  if (state === undefined) return 'none';
  const bounceDecides = state.lastBounceAt > 0 && state.lastBounceAt >= state.lastDeliveredAt;
  if (bounceDecides && state.lastBounceAt >= state.lastComplaintAt && now - state.lastBounceAt < settings.bounceTtlMs)
    return 'known_bounce';
  if (state.complaints > 0) return 'complainer';
  if (state.lastDeliveredAt > state.lastBounceAt && now - state.lastDeliveredAt >= settings.deliverySettleMs) return 'delivered';
  return 'none';
}
