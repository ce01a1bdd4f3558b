/**
 * The SSRF guard: unless VERIFY_ALLOW_PRIVATE_MX, the prober never connects to an address that
 * is not public unicast, whatever a domain's MX says (a caller could otherwise point an MX at
 * 127.0.0.1 or 10.0.0.5 and use us to scan a private network).
 */
import ipaddr from 'ipaddr.js';

export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  let address = ipaddr.parse(ip);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address();
  return address.range() === 'unicast';
}

export function filterProbeTargets(addresses: string[], allowPrivate: boolean): { allowed: string[]; refused: string[] } {
  if (allowPrivate) return { allowed: addresses, refused: [] };
  const allowed = addresses.filter(isPublicAddress);
  return { allowed, refused: addresses.filter((address) => !allowed.includes(address)) };
}
