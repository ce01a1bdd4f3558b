/**
 * How long a DNS answer may be kept, as the zone that gave it asks (RFC 2308, RFC 2181 §8).
 * Pure: the resolver's cache reads these.
 */
import type { DnsRecord } from './query.ts';

/** RFC 2308 §5 lets resolvers cap negative caching; 15 minutes, so a domain that is fixed is seen soon. */
export const NEGATIVE_MAX_SECONDS = 900;
/** Positive answers: at most a day, whatever their TTL. */
export const POSITIVE_MAX_SECONDS = 86_400;
/**
 * A negative answer without an SOA in its authority section gives no bound of its own; zones
 * always send one, a resolver that rewrites answers may not. Kept briefly, as before this rule.
 */
export const NO_SOA_SECONDS = 60;

/** The least TTL of the records an answer was built from (a CNAME chain included), capped. */
export function positiveSeconds(records: readonly DnsRecord[], capSeconds: number): number {
  if (records.length === 0) return 0;
  return Math.max(0, Math.min(capSeconds, POSITIVE_MAX_SECONDS, ...records.map((record) => record.ttl)));
}

interface SoaData {
  minimum?: number;
}
const isSoaData = (data: unknown): data is SoaData => typeof data === 'object' && data !== null && 'minimum' in data;

/** NXDOMAIN or no data: the lesser of the SOA's own TTL and its MINIMUM field (RFC 2308 §5), capped. */
export function negativeSeconds(authorities: readonly DnsRecord[], capSeconds: number): number {
  const soa = authorities.find((record) => record.type === 'SOA');
  const cap = Math.min(capSeconds, NEGATIVE_MAX_SECONDS);
  if (soa === undefined || !isSoaData(soa.data)) return Math.max(0, Math.min(cap, NO_SOA_SECONDS));
  return Math.max(0, Math.min(cap, soa.ttl, soa.data.minimum ?? 0));
}
