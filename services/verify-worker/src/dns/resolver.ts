/**
 * Mail-host lookups (RFC 5321 §5.1, RFC 7505) over node's c-ares resolver, which takes
 * `host:port` servers (VERIFY_DNS_SERVERS) and tells NXDOMAIN, NODATA and SERVFAIL apart.
 * A temporary failure is never taken for a missing domain. Answers are cached (address records
 * for their TTL; MX answers, whose TTL c-ares does not report, for a bounded time) and
 * concurrent identical lookups share one query.
 */
import { Resolver } from 'node:dns/promises';

export type MailHostsLookup =
  | { kind: 'mx'; hosts: string[] }
  | { kind: 'implicit'; hosts: string[] }
  | { kind: 'null_mx' }
  | { kind: 'nxdomain' }
  | { kind: 'no_mail_host' }
  | { kind: 'temp_error'; detail: string };

export interface ResolverOptions {
  servers?: string[];
  timeoutMs: number;
  /** Upper bound for caching MX answers, seconds. */
  mxCacheSeconds: number;
  onLookup?: (type: 'MX' | 'A', result: 'hit' | 'miss' | 'error') => void;
  now?: () => number;
}

const NEGATIVE_CACHE_SECONDS = 60;
const code = (error: unknown) => (error as { code?: string }).code ?? 'UNKNOWN';
const isAbsent = (error: unknown) => code(error) === 'ENOTFOUND' || code(error) === 'ENODATA';

export class DnsResolver {
  private readonly resolver: Resolver;
  private readonly cache = new Map<string, { value: unknown; expiresAt: number }>();
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly now: () => number;

  constructor(private readonly options: ResolverOptions) {
    this.resolver = new Resolver({ timeout: Math.max(1, Math.floor(options.timeoutMs / 2)), tries: 2 });
    if (options.servers !== undefined && options.servers.length > 0) this.resolver.setServers(options.servers);
    this.now = options.now ?? Date.now;
  }

  lookupMailHosts(domain: string): Promise<MailHostsLookup> {
    return this.cached(`mx:${domain}`, 'MX', async () => {
      try {
        const records = await this.resolver.resolveMx(domain);
        if (records.length === 1 && (records[0]!.exchange === '' || records[0]!.exchange === '.'))
          return { value: { kind: 'null_mx' }, ttl: this.options.mxCacheSeconds };
        const hosts = records
          .filter((record) => record.exchange !== '' && record.exchange !== '.')
          .sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange))
          .map((record) => record.exchange.toLowerCase());
        return { value: { kind: 'mx', hosts }, ttl: this.options.mxCacheSeconds };
      } catch (error) {
        if (code(error) === 'ENOTFOUND') return { value: { kind: 'nxdomain' }, ttl: NEGATIVE_CACHE_SECONDS };
        if (code(error) !== 'ENODATA') return { value: { kind: 'temp_error', detail: code(error) }, ttl: 0 };
      }
      // No MX records: the domain's own address records are its implicit MX (RFC 5321 §5.1).
      const addresses = await this.lookupAddresses(domain);
      if (addresses.kind === 'ok') return { value: { kind: 'implicit', hosts: [domain] }, ttl: this.options.mxCacheSeconds };
      if (addresses.kind === 'temp_error') return { value: { kind: 'temp_error', detail: addresses.detail }, ttl: 0 };
      return { value: { kind: 'no_mail_host' }, ttl: NEGATIVE_CACHE_SECONDS };
    }) as Promise<MailHostsLookup>;
  }

  lookupAddresses(host: string): Promise<{ kind: 'ok'; addresses: string[] } | { kind: 'none' } | { kind: 'temp_error'; detail: string }> {
    return this.cached(`a:${host}`, 'A', async () => {
      const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(host, { ttl: true }), this.resolver.resolve6(host, { ttl: true })]);
      const records = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
      if (records.length > 0) {
        return {
          value: { kind: 'ok', addresses: records.map((record) => record.address) },
          ttl: Math.min(...records.map((record) => record.ttl)),
        };
      }
      const failure = [v4, v6].find((result) => result.status === 'rejected' && !isAbsent(result.reason));
      if (failure !== undefined && failure.status === 'rejected')
        return { value: { kind: 'temp_error', detail: code(failure.reason) }, ttl: 0 };
      return { value: { kind: 'none' }, ttl: NEGATIVE_CACHE_SECONDS };
    }) as Promise<{ kind: 'ok'; addresses: string[] } | { kind: 'none' } | { kind: 'temp_error'; detail: string }>;
  }

  private async cached(key: string, type: 'MX' | 'A', load: () => Promise<{ value: unknown; ttl: number }>): Promise<unknown> {
    const hit = this.cache.get(key);
    if (hit !== undefined && hit.expiresAt > this.now()) {
      this.options.onLookup?.(type, 'hit');
      return hit.value;
    }
    const pending = this.inFlight.get(key);
    if (pending !== undefined) return pending;
    const loading = load().then(({ value, ttl }) => {
      const failed = (value as { kind: string }).kind === 'temp_error';
      this.options.onLookup?.(type, failed ? 'error' : 'miss');
      if (ttl > 0) this.cache.set(key, { value, expiresAt: this.now() + ttl * 1_000 });
      return value;
    });
    this.inFlight.set(key, loading);
    try {
      return await loading;
    } finally {
      this.inFlight.delete(key);
    }
  }
}
