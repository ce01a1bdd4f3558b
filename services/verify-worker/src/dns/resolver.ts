/**
 * Mail-host lookups (RFC 5321 §5.1, RFC 7505) over the configured resolvers (`query.ts`: UDP, TCP
 * when truncated, every record's TTL and the authority section), telling NXDOMAIN, NODATA,
 * SERVFAIL, refusals and timeouts apart, following CNAME chains in answers.
 *
 * Rules, as deployed mail servers apply them:
 * - A null MX (`MX 0 .`) anywhere in the set: the domain takes no mail; no host is tried.
 * - MX hosts by preference; a host whose name does not resolve (NXDOMAIN, no address) is skipped.
 *   When none resolves the domain has no mail host; when those left failed temporarily
 *   (SERVFAIL, timeout), it is a temporary failure, never a missing domain.
 * - No MX records: the domain's own address records are its implicit MX.
 * Caching, as the zones ask: a positive answer for its TTL (at most `mxCacheSeconds`); a negative
 * one (NXDOMAIN, no data) for the SOA minimum of its authority section (RFC 2308 §5: the lesser
 * of the SOA's TTL and its MINIMUM), at most 15 minutes; failures not at all. A negative answer
 * without an SOA (zones always send one; a rewriting resolver may not) is kept a minute. Nothing
 * is kept while `cachingAllowed` says no (an untrusted resolver), and concurrent identical
 * lookups share one query.
 */
import { negativeSeconds, positiveSeconds } from './answer-ttl.ts';
import { DnsQueryError, RCODE, dnsServers, queryDns, type DnsResponse, type DnsServer } from './query.ts';

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

export type MxAnswer = { kind: 'mx'; names: string[] } | { kind: 'null_mx' } | { kind: 'nxdomain' } | { kind: 'nodata' } | Failure;
type AddressAnswer = { kind: 'ok'; addresses: string[] } | { kind: 'none' } | Failure;
type Failure = { kind: 'temp_error'; detail: string } | { kind: 'timeout' };

export interface ResolverOptions {
  servers?: string[];
  timeoutMs: number;
  /** Upper bound for caching answers, seconds (positive ones; negative ones also stop at 15 minutes). */
  mxCacheSeconds: number;
  onLookup?: (type: 'MX' | 'A', result: 'hit' | 'miss' | 'error') => void;
  /** Whether answers may be kept now: not while the resolver is untrusted (resolver-health.ts). */
  cachingAllowed?: () => boolean;
  now?: () => number;
}

type Timed<T> = { value: T; ttl: number };

const isNullMx = (exchange: string) => exchange === '' || exchange === '.';
const hostName = (name: string) => name.toLowerCase().replace(/\.$/, '');

function failure(error: unknown): Failure {
  if (error instanceof DnsQueryError) {
    if (error.kind === 'timeout') return { kind: 'timeout' };
    return { kind: 'temp_error', detail: error.kind === 'refused' ? 'ECONNREFUSED' : error.message };
  }
  return { kind: 'temp_error', detail: 'UNKNOWN' };
}

/** A response that answers nothing: SERVFAIL, REFUSED and the other error codes. */
function rcodeFailure(response: DnsResponse): Failure | undefined {
  if (response.rcode === RCODE.NOERROR || response.rcode === RCODE.NXDOMAIN) return undefined;
  return { kind: 'temp_error', detail: response.rcode === RCODE.SERVFAIL ? 'ESERVFAIL' : response.rcode === 5 ? 'EREFUSED' : 'EBADRESP' };
}

interface MxData {
  preference: number;
  exchange: string;
}
const isMxData = (data: unknown): data is MxData =>
  typeof data === 'object' && data !== null && 'exchange' in data && typeof data.exchange === 'string' && 'preference' in data;

/** Answers of one record type: cached for their TTL, and one query shared by concurrent askers. */
class AnswerCache<T extends { kind: string }> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();
  private readonly inFlight = new Map<string, Promise<T>>();

  constructor(
    private readonly type: 'MX' | 'A',
    private readonly now: () => number,
    private readonly onLookup: ResolverOptions['onLookup'],
    private readonly cachingAllowed: () => boolean,
  ) {}

  async get(key: string, load: () => Promise<Timed<T>>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.expiresAt > this.now()) {
      this.onLookup?.(this.type, 'hit');
      return hit.value;
    }
    const pending = this.inFlight.get(key);
    if (pending !== undefined) return pending;
    const loading = load().then(({ value, ttl }) => {
      this.onLookup?.(this.type, value.kind === 'temp_error' || value.kind === 'timeout' ? 'error' : 'miss');
      if (ttl > 0 && this.cachingAllowed()) this.entries.set(key, { value, expiresAt: this.now() + ttl * 1_000 });
      return value;
    });
    this.inFlight.set(key, loading);
    try {
      return await loading;
    } finally {
      this.inFlight.delete(key);
    }
  }

  /** Seconds the cached answer for `key` is still good for; 0 when none is kept. */
  secondsLeft(key: string): number {
    const hit = this.entries.get(key);
    return hit === undefined ? 0 : Math.max(0, Math.floor((hit.expiresAt - this.now()) / 1_000));
  }

  peek(key: string): T | undefined {
    const hit = this.entries.get(key);
    return hit !== undefined && hit.expiresAt > this.now() ? hit.value : undefined;
  }

  clear(): void {
    this.entries.clear();
  }
}

export class DnsResolver {
  private readonly servers: DnsServer[];
  private readonly mxAnswers: AnswerCache<MxAnswer>;
  private readonly addressAnswers: AnswerCache<AddressAnswer>;

  constructor(private readonly options: ResolverOptions) {
    this.servers = dnsServers(options.servers);
    const now = options.now ?? Date.now;
    const allowed = options.cachingAllowed ?? (() => true);
    this.mxAnswers = new AnswerCache('MX', now, options.onLookup, allowed);
    this.addressAnswers = new AnswerCache('A', now, options.onLookup, allowed);
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

  /**
   * Seconds the answers behind `domain`'s last lookup are still kept: what a verdict drawn from
   * them (invalid_domain) may be cached for. 0 when they are not kept.
   */
  keepSeconds(domain: string): number {
    const mx = this.mxAnswers.peek(domain);
    if (mx === undefined) return 0;
    const own = this.mxAnswers.secondsLeft(domain);
    if (mx.kind !== 'mx' && mx.kind !== 'nodata') return own;
    const hosts = mx.kind === 'mx' ? mx.names : [domain];
    return Math.min(own, ...hosts.map((host) => this.addressAnswers.secondsLeft(host)));
  }

  /** Forgets every answer: those learnt just before the resolver was found lying may be lies. */
  clear(): void {
    this.mxAnswers.clear();
    this.addressAnswers.clear();
  }

  /** An MX question asked of the resolver now, never answered from the cache (the canaries). */
  async probeMx(domain: string): Promise<MxAnswer> {
    return (await this.queryMx(domain)).value;
  }

  lookupMx(domain: string): Promise<MxAnswer> {
    return this.mxAnswers.get(domain, () => this.queryMx(domain));
  }

  private async queryMx(domain: string): Promise<Timed<MxAnswer>> {
    const cap = this.options.mxCacheSeconds;
    let response: DnsResponse;
    try {
      response = await queryDns(this.servers, domain, 'MX', this.options.timeoutMs);
    } catch (error) {
      return { value: failure(error), ttl: 0 };
    }
    const failed = rcodeFailure(response);
    if (failed !== undefined) return { value: failed, ttl: 0 };
    if (response.rcode === RCODE.NXDOMAIN) return { value: { kind: 'nxdomain' }, ttl: negativeSeconds(response.authorities, cap) };
    const records = response.answers.filter((record) => record.type === 'MX' && isMxData(record.data));
    if (records.length === 0) return { value: { kind: 'nodata' }, ttl: negativeSeconds(response.authorities, cap) };
    const chain = response.answers.filter((record) => record.type === 'MX' || record.type === 'CNAME');
    const ttl = positiveSeconds(chain, cap);
    const mx = records.flatMap((record) => (isMxData(record.data) ? [record.data] : []));
    if (mx.some((record) => isNullMx(record.exchange))) return { value: { kind: 'null_mx' }, ttl };
    const names = [
      ...new Set(
        mx.sort((a, b) => a.preference - b.preference || a.exchange.localeCompare(b.exchange)).map((record) => hostName(record.exchange)),
      ),
    ];
    return { value: { kind: 'mx', names }, ttl };
  }

  lookupAddresses(host: string): Promise<AddressAnswer> {
    return this.addressAnswers.get(host, async () => {
      const cap = this.options.mxCacheSeconds;
      const settled = await Promise.allSettled(
        (['A', 'AAAA'] as const).map(async (type) => ({
          type,
          response: await queryDns(this.servers, host, type, this.options.timeoutMs),
        })),
      );
      const responses = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      const found = responses.flatMap(({ type, response }) =>
        response.rcode === RCODE.NOERROR
          ? response.answers.filter((record) => record.type === type && typeof record.data === 'string')
          : [],
      );
      if (found.length > 0) {
        const chain = responses.flatMap(({ response }) => response.answers.filter((record) => record.type === 'CNAME'));
        return {
          value: { kind: 'ok', addresses: found.map((record) => String(record.data)) },
          ttl: positiveSeconds([...found, ...chain], cap),
        };
      }
      for (const result of settled) if (result.status === 'rejected') return { value: failure(result.reason), ttl: 0 };
      for (const { response } of responses) {
        const failed = rcodeFailure(response);
        if (failed !== undefined) return { value: failed, ttl: 0 };
      }
      const negative = responses.map(({ response }) => negativeSeconds(response.authorities, cap));
      return { value: { kind: 'none' }, ttl: Math.min(...negative) };
    });
  }
}
