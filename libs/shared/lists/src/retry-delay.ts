/**
 * How long a list entry whose outcome was temporary (the engine's `temporary`: a 4xx reply, a
 * timeout, a failed connection or lookup) waits before retry `round` (1-based): the delay the
 * deciding reply asked for when it named one (`retryAfterSeconds`), else the configured one.
 */
export function retryDelayMs(round: number, configuredS: readonly number[], askedS: number | undefined): number {
  return (askedS ?? configuredS[round - 1] ?? configuredS.at(-1) ?? 60) * 1_000;
}
