/**
 * The rules that turn canary checks into trust (decisions, "Verification's own blind spots").
 * Pure, so the thresholds are tested on their own.
 */

/** The resolver is trusted while at least half of the DNS canaries resolve to an MX set. */
export function resolverTrusted(resolved: number, canaries: number): boolean {
  return canaries === 0 || resolved * 2 >= canaries;
}

/** Port 25 is open while at least one canary mail server accepts a TCP connection (none configured: nothing to say it is not). */
export function egressOpen(accepted: number, tried: number): boolean {
  return tried === 0 || accepted > 0;
}

/** How often the canaries are checked: every minute while all is well, and sooner while not, so a recovery is seen within seconds. */
export const HEALTHY_CHECK_INTERVAL_MS = 60_000;
export const UNHEALTHY_CHECK_INTERVAL_MS = 5_000;
