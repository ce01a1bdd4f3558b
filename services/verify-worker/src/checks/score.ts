/**
 * The score, 0..100: a base per reason, small adjustments, clamped into the verdict's band so
 * that every deliverable scores above every risky and every risky above every undeliverable.
 * The table is data, published in docs/verification.md (test/docs.test.ts holds it to this file)
 * and the README.
 */
import type { Reason, Verdict } from '@svc/contracts';
import type { AddressFacts, Decision } from './verdict.ts';

export const SCORE_BANDS: Record<Verdict, readonly [number, number]> = {
  deliverable: [80, 100],
  risky: [20, 79],
  undeliverable: [0, 10],
};

export const REASON_POINTS: Record<Reason, number> = {
  accepted_email: 95,
  role_account: 75,
  accept_all: 60,
  greylisted: 55,
  // Nothing was learnt of the mailbox: the provider asked this egress to slow down.
  throttled: 50,
  mailbox_full: 45,
  smtp_blocked: 45,
  timeout: 40,
  unexpected_error: 40,
  dns_unavailable: 40,
  smtp_unavailable: 40,
  no_connect: 35,
  disposable: 25,
  mailbox_disabled: 8,
  rejected_email: 5,
  invalid_domain: 2,
  invalid_syntax: 0,
  known_bounce: 3,
  known_delivery: 90,
  complainer: 30,
};

export const ADJUSTMENTS = {
  /** A likely typo was found: the caller probably meant another address. */
  typoSuspected: -10,
  /** A role mailbox whose reason is something else (catch-all, timeout...). */
  role: -5,
} as const;

export function score(facts: AddressFacts, decision: Decision, typoSuspected: boolean): number {
  let points = REASON_POINTS[decision.reason];
  if (typoSuspected) points += ADJUSTMENTS.typoSuspected;
  if (facts.role && decision.reason !== 'role_account') points += ADJUSTMENTS.role;
  return clampToBand(decision.verdict, points);
}

/** Points kept inside their verdict's band, so that a score never contradicts its verdict. */
export function clampToBand(verdict: keyof typeof SCORE_BANDS, points: number): number {
  const [low, high] = SCORE_BANDS[verdict];
  return Math.min(high, Math.max(low, points));
}
