/**
 * The SSRF guard: unless VERIFY_ALLOW_PRIVATE_MX, the prober never connects to an address that
 * is not public unicast, whatever a domain's MX says (a caller could otherwise point an MX at
 * 127.0.0.1 or 10.0.0.5 and use us to scan a private network). "Public" is the one rule the
 * callbacks' guard uses too (libs/shared/webhooks/src/address-guard.ts).
 */
import { isPublicAddress } from '@svc/webhooks';

export function filterProbeTargets(addresses: string[], allowPrivate: boolean): { allowed: string[]; refused: string[] } {
  if (allowPrivate) return { allowed: addresses, refused: [] };
  const allowed = addresses.filter(isPublicAddress);
  return { allowed, refused: addresses.filter((address) => !allowed.includes(address)) };
}
