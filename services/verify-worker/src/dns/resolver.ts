/**
 * Mail-host lookups (RFC 5321 §5.1, RFC 7505) over node's c-ares resolver, which takes
 * `host:port` servers (VERIFY_DNS_SERVERS), tells NXDOMAIN, NODATA, SERVFAIL and timeouts apart,
 * follows CNAME chains in answers and asks again over TCP when a UDP answer comes truncated.
 *
 * Rules, as deployed mail servers apply them:
 * - A null MX (`MX 0 .`) anywhere in the set: the domain takes no mail; no host is tried.
 * - MX hosts by preference; a host whose name does not resolve (NXDOMAIN, no address) is skipped.
 *   When none resolves the domain has no mail host; when those left failed temporarily
 *   (SERVFAIL, timeout), it is a temporary failure, never a missing domain.
 * - No MX records: the domain's own address records are its implicit MX.
 * Answers are cached (address records for their TTL; MX answers, whose TTL c-ares does not
 * report, for a bounded time; NXDOMAIN and empty answers for a minute; failures not at all) and
 * concurrent identical lookups share one query.
 */
import { Resolver } from 'node:dns/promises';

export interface MailHost {
  name: string;
  addresses: string[];
}

export type MailHostsLookup =
  /** `names`: every MX name by preference; `hosts`: those that resolved, in the same order. */
  | { kind: 'mx'; names: string[]; hosts: MailHost[] }
  | { kind: 'implicit'; names: string[]; hosts: MailHost[] }
  | { kind: 'null_mx' }
  | { kind: 'nxdomain' }
  | { kind: 'no_mail_host'; names: string[] }
  /** `names`: the MX answer came, the hosts' addresses did not. */
  | { kind: 'temp_error'; detail: string; names?: string[] }
  | { kind: 'timeout'; names?: string[] };

type MxAnswer = { kind: 'mx'; names: string[] } | { kind: 'null_mx' } | { kind: 'nxdomain' } | { kind: 'nodata' } | Failure;
type AddressAnswer = { kind: 'ok'; addresses: string[] } | { kind: 'none' } | Failure;
type Failure = { kind: 'temp_error'; detail: string } | { kind: 'timeout' };

export interface ResolverOptions {
  servers?: string[];
  timeoutMs: number;
  /** Upper bound for caching MX answers, seconds. */
  mxCacheSeconds: number;
  onLookup?: (type: 'MX' | 'A', result: 'hit' | 'miss' | 'error') => void;
  now?: () => number;
}

const NEGATIVE_CACHE_SECONDS = 60;
const code = (error: unknown) => (error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'UNKNOWN');
const isAbsent = (error: unknown) => code(error) === 'ENOTFOUND' || code(error) === 'ENODATA';
const failure = (error: unknown): Failure =>
  code(error) === 'ETIMEOUT' ? { kind: 'timeout' } : { kind: 'temp_error', detail: code(error) };
const isNullMx = (exchange: string) => exchange === '' || exchange === '.';

/** Answers of one record type: cached for their TTL, and one query shared by concurrent askers. */
class AnswerCache<T extends { kind: string }> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();
  private readonly inFlight = new Map<string, Promise<T>>();

  constructor(
    private readonly type: 'MX' | 'A',
    private readonly now: () => number,
    private readonly onLookup: ResolverOptions['onLookup'],
  ) {}

  async get(key: string, load: () => Promise<{ value: T; ttl: number }>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.expiresAt > this.now()) {
      this.onLookup?.(this.type, 'hit');
      return hit.value;
    }
    const pending = this.inFlight.get(key);
    if (pending !== undefined) return pending;
    const loading = load().then(({ value, ttl }) => {
      this.onLookup?.(this.type, value.kind === 'temp_error' || value.kind === 'timeout' ? 'error' : 'miss');
      if (ttl > 0) this.entries.set(key, { value, expiresAt: this.now() + ttl * 1_000 });
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

export class DnsResolver {
  private readonly resolver: Resolver;
  private readonly mxAnswers: AnswerCache<MxAnswer>;
  private readonly addressAnswers: AnswerCache<AddressAnswer>;

  constructor(private readonly options: ResolverOptions) {
    this.resolver = new Resolver({ timeout: Math.max(1, Math.floor(options.timeoutMs / 2)), tries: 2 });
    if (options.servers !== undefined && options.servers.length > 0) this.resolver.setServers(options.servers);
    const now = options.now ?? Date.now;
    this.mxAnswers = new AnswerCache('MX', now, options.onLookup);
    this.addressAnswers = new AnswerCache('A', now, options.onLookup);
  }
  async lookupMailHosts(domain: string): Promise<MailHostsLookup> {
    const mx = await this.lookupMx(domain);
    if (mx.kind === 'null_mx' || mx.kind === 'nxdomain' || mx.kind === 'timeout' || mx.kind === 'temp_error') return mx;
    const kind = mx.kind === 'mx' ? 'mx' : 'implicit';
    const names = mx.kind === 'mx' ? mx.names : [domain];
    const answers = await Promise.all(names.map((name) => this.lookupAddresses(name)));
    const hosts = names.flatMap((name, i) => {
      const answer = answers[i];
      return answer?.kind === 'ok' ? [{ name, addresses: answer.addresses }] : [];
    });
    if (hosts.length > 0) return { kind, names, hosts };
    const failed = answers.find((answer): answer is Failure => answer.kind === 'timeout' || answer.kind === 'temp_error');
    if (failed !== undefined) return { ...failed, names };
    return { kind: 'no_mail_host', names: mx.kind === 'mx' ? names : [] };
  }

  lookupMx(domain: string): Promise<MxAnswer> {
    return this.mxAnswers.get(domain, async () => {
      try {
        const records = await this.resolver.resolveMx(domain);
        if (records.some((record) => isNullMx(record.exchange)))
          return { value: { kind: 'null_mx' as const }, ttl: this.options.mxCacheSeconds };
        const names = [
          ...new Set(
            records
              .sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange))
              .map((record) => record.exchange.toLowerCase().replace(/\.$/, '')),
          ),
        ];
        return { value: { kind: 'mx', names }, ttl: this.options.mxCacheSeconds };
      } catch (error) {
        if (code(error) === 'ENOTFOUND') return { value: { kind: 'nxdomain' }, ttl: NEGATIVE_CACHE_SECONDS };
        if (code(error) === 'ENODATA') return { value: { kind: 'nodata' }, ttl: NEGATIVE_CACHE_SECONDS };
        return { value: failure(error), ttl: 0 };
      }
    });
  }

  lookupAddresses(host: string): Promise<AddressAnswer> {
    return this.addressAnswers.get(host, async () => {
      const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(host, { ttl: true }), this.resolver.resolve6(host, { ttl: true })]);
      const records = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
      if (records.length > 0) {
        return {
          value: { kind: 'ok', addresses: records.map((record) => record.address) },
          ttl: Math.min(...records.map((record) => record.ttl)),
        };
      }
      const failed = [v4, v6].find((result) => result.status === 'rejected' && !isAbsent(result.reason));
      if (failed !== undefined && failed.status === 'rejected') return { value: failure(failed.reason), ttl: 0 };
      return { value: { kind: 'none' }, ttl: NEGATIVE_CACHE_SECONDS };
    });
  }
}
