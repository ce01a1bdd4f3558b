/**
 * How long a list entry whose outcome was temporary (the engine's `temporary`: a 4xx reply, a
 * timeout, a failed connection or lookup) waits before retry `round` (1-based): the delay the
 * deciding reply asked for when it named one (`retryAfterSeconds`), else the configured one.
 */
export function retryDelayMs(round: number, configuredS: readonly number[], askedS: number | undefined): number {
  return (askedS ?? configuredS[round - 1] ?? configuredS.at(-1) ?? 60) * 1_000;
}

/**
 * An address a provider throttled (reason `throttled`: a throttle reply, its back-off or a spent
 * budget) is retried after the back-off however many times it takes, for this long after the list
 * started (decisions, "Politeness at volume"), so that a list at a throttling provider completes
 * with each mailbox's real verdict; other temporary answers have `LIST_RETRY_DELAYS_S` retries.
 */
export const THROTTLE_RETRY_WINDOW_MS = 24 * 3_600_000;

export function mayRetry(
  outcome: { temporary: boolean; result: { reason: string } },
  round: number,
  configuredS: readonly number[],
  sinceStartMs: number,
): boolean {
  if (!outcome.temporary) return false;
  if (round < configuredS.length) return true;
  return outcome.result.reason === 'throttled' && sinceStartMs < THROTTLE_RETRY_WINDOW_MS;
}
