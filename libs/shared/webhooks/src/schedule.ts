/**
 * When a failed delivery is tried again: exponential backoff (first delay doubled after each
 * failure, up to a ceiling) with jitter, for a bounded time after the event was enqueued. The
 * jitter spreads the retries of many events that failed together (a receiver that was down) so
 * that they do not all return at the same second.
 *
 * Defaults: 30 s, 1 min, 2 min, 4 min, ... 32 min, then hourly, each shortened by up to 20 %,
 * for 24 hours: about 30 attempts in all.
 */
export interface RetrySchedule {
  /** Delay after the first failed attempt. */
  firstDelayMs: number;
  /** Ceiling of a single delay. */
  maxDelayMs: number;
  /** No attempt is scheduled later than this after the event was enqueued. */
  giveUpAfterMs: number;
  /** Each delay is shortened by a random fraction up to this (0 to 0.5). */
  jitter: number;
}

export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = {
  firstDelayMs: 30_000,
  maxDelayMs: 3_600_000,
  giveUpAfterMs: 24 * 3_600_000,
  jitter: 0.2,
};

export function retrySchedule(overrides: Partial<RetrySchedule> = {}): RetrySchedule {
  const schedule = { ...DEFAULT_RETRY_SCHEDULE, ...overrides };
  if (!(schedule.firstDelayMs > 0 && schedule.maxDelayMs >= schedule.firstDelayMs && schedule.giveUpAfterMs >= 0))
    throw new RangeError('retry schedule: need 0 < firstDelayMs <= maxDelayMs and giveUpAfterMs >= 0');
  if (!(schedule.jitter >= 0 && schedule.jitter <= 0.5)) throw new RangeError('retry schedule: jitter must be within 0..0.5');
  return schedule;
}

/** The delay after the `failedAttempts`-th failure (1 for the first), `random` in [0, 1). */
export function retryDelayMs(schedule: RetrySchedule, failedAttempts: number, random: number = Math.random()): number {
  const exponent = Math.min(Math.max(failedAttempts - 1, 0), 52);
  const backoff = Math.min(schedule.firstDelayMs * 2 ** exponent, schedule.maxDelayMs);
  return Math.round(backoff * (1 - schedule.jitter * random));
}

export type NextStep = { retry: true; delayMs: number } | { retry: false };

/** After a failed attempt: when to try again, or not at all once the next try would fall past the window. */
export function nextStep(schedule: RetrySchedule, failedAttempts: number, enqueuedAt: number, now: number, random?: number): NextStep {
  const delayMs = retryDelayMs(schedule, failedAttempts, random);
  return now + delayMs - enqueuedAt > schedule.giveUpAfterMs ? { retry: false } : { retry: true, delayMs };
}

/** An upper bound on the attempts one event can get (every delay is at least the shortest one). */
export function maxAttempts(schedule: RetrySchedule): number {
  return Math.ceil(schedule.giveUpAfterMs / (schedule.firstDelayMs * (1 - schedule.jitter))) + 1;
}
