/**
 * How a durable queue retries a job that failed: one policy per queue, read by both of its
 * transports, so that embedded mode (timers in the process) and distributed mode (BullMQ's delayed
 * set) wait the same and give up after the same number of attempts.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Wait before the next attempt, after `attemptsMade` attempts of which the last failed with `error`. */
  delayMs(attemptsMade: number, error: unknown): number;
}

/** Waits `firstDelayMs`, then twice as long after each failure. */
export const exponentialRetry = (attempts: number, firstDelayMs: number): RetryPolicy => ({
  attempts,
  delayMs: (attemptsMade) => firstDelayMs * 2 ** (attemptsMade - 1),
});

/** The wait before the next attempt, or undefined when the job has had all its attempts. */
export function nextRetryDelay(policy: RetryPolicy, attemptsMade: number, error: unknown): number | undefined {
  return attemptsMade < policy.attempts ? Math.max(0, policy.delayMs(attemptsMade, error)) : undefined;
}
