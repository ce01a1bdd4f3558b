/**
 * Whether a list entry's outcome may change on a later attempt, and how long to wait before it:
 * the engine says per address whether its answer was temporary (a 4xx reply, a timeout, a failed
 * connection or lookup) and the delay the deciding reply asked for, when its text names one.
 */
import type { VerifyOutcome } from '../engine/results.ts';

export interface Temporariness {
  temporary: boolean;
  /** The delay the server asked for, when it named one. */
  retryAfterMs?: number;
}

export function temporariness(outcome: Omit<VerifyOutcome, 'result'>): Temporariness {
  return outcome.retryAfterSeconds === undefined
    ? { temporary: outcome.temporary }
    : { temporary: outcome.temporary, retryAfterMs: outcome.retryAfterSeconds * 1_000 };
}

/** Wait before retry `round` (1-based): the server's delay when it gave one, else the configured one. */
export function retryDelayMs(round: number, configuredS: readonly number[], askedMs: number | undefined): number {
  return askedMs ?? (configuredS[round - 1] ?? configuredS.at(-1) ?? 60) * 1_000;
}
