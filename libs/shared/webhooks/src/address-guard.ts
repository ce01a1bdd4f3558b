/**
 * The SSRF guard's notion of "public": a callback may only reach public unicast addresses, so that
 * a caller cannot point us at 127.0.0.1, 10.0.0.5, 169.254.169.254 (cloud metadata) or the like.
 * Everything ipaddr.js does not class as plain `unicast` is refused: loopback, private, link-local,
 * unique-local, multicast, carrier-grade NAT, reserved and documentation ranges, and the IPv6
 * forms that embed an IPv4 address (6to4, Teredo, NAT64). IPv4-mapped IPv6 (`::ffff:10.0.0.1`)
 * is judged by the IPv4 address it carries. The verifier's guard on mail servers uses this same
 * function (services/verify-worker/src/net/private-address.ts).
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export function isPublicAddress(ip: string): boolean {
  if (isIP(ip) === 0) return false;
  let address = ipaddr.parse(ip);
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()) address = address.toIPv4Address();
  return address.range() === 'unicast';
}

/** `localhost` and its subdomains resolve to loopback by convention (RFC 6761), whatever DNS says. */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The host of a parsed URL without IPv6 brackets, and whether it is an address literal. */
export function hostOf(url: URL): { host: string; literal: boolean } {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { host, literal: isIP(host) !== 0 };
}
