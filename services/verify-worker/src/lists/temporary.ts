/**
 * Whether a list entry's outcome may change on a later attempt, and how long to wait before it.
 *
 * Derived from the result's reason for now: `greylisted` (any 4xx: greylisting, rate limiting,
 * a busy server), `timeout` and `no_connect`. The engine is learning to say per address whether
 * an answer was temporary and what delay the server asked for; when it does, this is the one
 * place to read it from (`retryAfterMs` then carries the server's delay).
 */
import type { VerifyResult } from '@svc/contracts';

export interface Temporariness {
  temporary: boolean;
  /** The delay the server asked for, when it named one. */
  retryAfterMs?: number;
}

const TEMPORARY_REASONS: ReadonlySet<VerifyResult['reason']> = new Set(['greylisted', 'timeout', 'no_connect']);

export function temporariness(result: VerifyResult): Temporariness {
  return { temporary: TEMPORARY_REASONS.has(result.reason) };
}

/** Wait before retry `round` (1-based): the server's delay when it gave one, else the configured one. */
export function retryDelayMs(round: number, configuredS: readonly number[], askedMs: number | undefined): number {
  return askedMs ?? (configuredS[round - 1] ?? configuredS.at(-1) ?? 60) * 1_000;
}
