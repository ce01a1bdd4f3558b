/**
 * The SSRF guard's notion of "public": a callback may only reach global unicast addresses, so
 * that a caller cannot point us at 127.0.0.1, 10.0.0.5, 169.254.169.254 (cloud metadata) or the
 * like. An IPv4 address is public when ipaddr.js classes it as plain `unicast` (not loopback,
 * private, link-local, carrier-grade NAT, multicast, reserved or documentation ranges). An IPv6
 * address must be global unicast (2000::/3) and plain `unicast` there too (not 6to4, Teredo,
 * NAT64, documentation, benchmarking): that refuses IPv4-compatible addresses (`::/96`, such as
 * `::127.0.0.1`, which ipaddr.js itself calls unicast) with everything else outside 2000::/3.
 * IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is judged by the IPv4 address it carries. The verifier's
 * guard on mail servers uses this same function (services/verify-worker/src/net/private-address.ts).
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * An IPv6 address as the URL parser writes it. ipaddr.js reads the dotted form `::a.b.c.d`
 * (IPv4-compatible) as if it were `::ffff:a.b.c.d` (IPv4-mapped); the canonical text (`::7f00:1`)
 * is read as what it is. A zone (`fe80::1%eth0`) has no canonical form: undefined.
 */
function canonicalIPv6(ip: string): ipaddr.IPv6 | undefined {
  try {
    return ipaddr.IPv6.parse(new URL(`http://[${ip}]/`).hostname.slice(1, -1));
  } catch {
    return undefined;
  }
}

export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return ipaddr.IPv4.parse(ip).range() === 'unicast';
  if (family !== 6) return false;
  const address = canonicalIPv6(ip);
  if (address === undefined) return false;
  if (address.isIPv4MappedAddress()) return address.toIPv4Address().range() === 'unicast';
  return address.match(GLOBAL_UNICAST) && address.range() === 'unicast';
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
