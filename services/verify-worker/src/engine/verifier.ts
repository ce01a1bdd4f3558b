/**
 * One batch, end to end: parse every entry, probe each distinct address once, group domains by
 * their mail servers so one session carries many RCPTs (each domain's control and postmaster
 * first, then its addresses), weigh each domain's replies with the evidence rule, and answer within the batch
 * deadline: whatever is unfinished then is `risky`/`timeout`. Any string is a result, and no
 * entry can fail the batch: an entry whose processing throws is that entry's `unexpected_error`.
 */
import { setMaxListeners } from 'node:events';
import { dedupKey, type BeforeSession, type Reason, type VerifyOptions, type VerifyOutcome, type VerifyResult } from '@svc/contracts';
import { deadlineSignal } from '@svc/jobs';
import {
  classifySessionReply,
  isDisposableDomain,
  isFreeProvider,
  isRoleAccount,
  parseAddress,
  readRcptReply,
  suggestDomain,
  weighEvidence,
  type AddressFacts,
  type DnsOutcome,
  type DomainFindings,
  type ParsedAddress,
  type SmtpOutcome,
  type SmtpReply,
} from '../checks/index.ts';
import { fromCachedOutcome, outcomeCacheKey, toCachedOutcome, type CachedOutcome } from '../cache/cached-outcome.ts';
import type { MailHost, MailHostsLookup } from '../dns/resolver.ts';
import { throttlesProvider } from '../checks/throttle-replies.ts';
import { controlAddress } from './control-address.ts';
import { definite, type ControlEvidence } from './control-evidence.ts';
import {
  probeMailServers,
  type MailServerProbeDeps,
  type ProbeContext,
  type ProbeOutcome,
  type ServerLimits,
} from './mail-server-probe.ts';
import { invalidSyntaxOutcome, probedOutcome, unexpectedErrorOutcome } from './results.ts';
import type { Feedback } from '@svc/feedback';
import { applyRecalled, recallFeedback, rememberVerifications } from './feedback-effects.ts';

export type { VerifyOptions, VerifyOutcome } from '@svc/contracts';

export interface VerifierDeps {
  lookupMailHosts: (domain: string) => Promise<MailHostsLookup>;
  probe: MailServerProbeDeps;
  batchDeadlineMs: number;
  /** Seed of the controls' local parts (the envelope sender): stable across the workers of a deployment. */
  controlSeed: string;
  /**
   * Settled outcomes, keyed by a hash of the normalised address, holding no address (never
   * timeouts or temporary states). `ttlSeconds`: a shorter life than the cache's own, for
   * outcomes drawn from a negative DNS answer (its zone's negative TTL).
   */
  cache?: {
    get(key: string): Promise<CachedOutcome | undefined>;
    set(key: string, value: CachedOutcome, ttlSeconds?: number): Promise<void>;
  };
  /** What each domain's controls showed, kept with its facts (control-evidence.ts); absent: asked in every batch. */
  evidence?: {
    get(domain: string): Promise<ControlEvidence | undefined>;
    set(domain: string, value: ControlEvidence): Promise<void>;
  };
  /** Seconds the DNS answers behind a domain's verdict are still kept (0: not kept); default: as long as the cache keeps anything. */
  dnsKeepSeconds?: (domain: string) => number;
  /** Whether the verifier can see: resolver and egress health (health/). Absent: it always can. */
  health?: VerifierHealth;
  onResult?: (result: VerifyResult) => void;
  /** Learning from sends: what the calling key reported (feedback-effects.ts). Absent: none. */
  feedback?: Feedback;
}

/** The verifier's view of its own blind spots. */
export interface VerifierHealth {
  /** The resolver's trust from a canary check begun at or after `since` (one shared by concurrent askers). */
  resolverTrustedSince(since: number): Promise<boolean>;
  /** The resolver's trust now (the latest check, waiting for the first). */
  resolverTrusted(): Promise<boolean>;
  /** Whether port 25 can be reached (the latest egress check, waiting for the first). */
  egressOpen(): Promise<boolean>;
  /** Whether port 25 can be reached, from an egress check begun at or after `since` (shared by concurrent askers). */
  egressOpenSince(since: number): Promise<boolean>;
  /** The latest verdicts without waiting, for a batch whose deadline came first: unknown trust is no trust, an unknown egress is open. */
  latest(): { resolverTrusted: boolean; egressOpen: boolean };
}

/** Outcomes worth remembering: they will not change on the next try. */
const SETTLED: ReadonlySet<Reason> = new Set<Reason>([
  'accepted_email',
  'rejected_email',
  'mailbox_disabled',
  'invalid_domain',
  'accept_all',
  'disposable',
  'role_account',
]);
/** Time kept back from the deadline to assemble and send the answer. */
const ANSWER_MARGIN_MS = 250;

/** Lookups whose verdict hangs on the resolver telling the truth: negative answers and failures. */
const DNS_DECIDES: ReadonlySet<MailHostsLookup['kind']> = new Set<MailHostsLookup['kind']>([
  'nxdomain',
  'null_mx',
  'no_mail_host',
  'temp_error',
  'timeout',
]);

const probed = (lookup: MailHostsLookup | undefined): lookup is { kind: 'mx' | 'implicit'; names: string[]; hosts: MailHost[] } =>
  lookup?.kind === 'mx' || lookup?.kind === 'implicit';

function dnsOutcome(lookup: MailHostsLookup | undefined): DnsOutcome {
  if (lookup === undefined) return 'timeout';
  return probed(lookup) ? 'ok' : lookup.kind;
}

/** A map that says when it grows: the verifier's settled outcomes, for progress. */
class SettlingMap<K, V> extends Map<K, V> {
  constructor(private readonly grew: (size: number) => void) {
    super();
  }

  override set(key: K, value: V): this {
    const added = !this.has(key);
    super.set(key, value);
    if (added) this.grew(this.size);
    return this;
  }
}

export class Verifier {
  constructor(private readonly deps: VerifierDeps) {}

  /** One result per entry, in input order. */
  async verify(emails: string[], options: VerifyOptions): Promise<VerifyResult[]> {
    return (await this.verifyDetailed(emails, options)).map((outcome) => outcome.result);
  }

  /**
   * As `verify`, with each result's retry facts: whether the outcome was temporary (a 4xx
   * reply, a timeout, a failed connection or lookup) and the delay the deciding reply asked
   * for ("try again in 300 seconds"), for callers that retry later (list verification).
   */
  async verifyDetailed(emails: string[], options: VerifyOptions): Promise<VerifyOutcome[]> {
    const deadlineAt = Math.min(options.deadlineAt, Date.now() + this.deps.batchDeadlineMs) - ANSWER_MARGIN_MS;
    const { signal, release } = deadlineSignal(deadlineAt, [options.signal]);
    setMaxListeners(0, signal); // one listener per concurrent session, by design
    let byKey: Map<string, VerifyOutcome>;
    try {
      byKey = await this.verifyDistinct(emails, signal, deadlineAt, options.beforeSession, options.keyId, options.onSettled);
    } finally {
      release();
    }
    return emails.map((email) => {
      const outcome = byKey.get(dedupKey(email)) ?? unexpectedErrorOutcome(email, false);
      return { ...outcome, result: { ...outcome.result, email } };
    });
  }

  private async verifyDistinct(
    emails: string[],
    signal: AbortSignal,
    deadlineAt: number,
    beforeSession: BeforeSession | undefined,
    keyId?: string,
    onSettled?: (settled: number, total: number) => void,
  ): Promise<Map<string, VerifyOutcome>> {
    let total = 0;
    // Reports each newly settled address once the total is known (after the syntax pass).
    const settled = new SettlingMap<string, VerifyOutcome>((size) => {
      if (total > 0) onSettled?.(size, total);
    });
    const toProbe = new Map<string, ParsedAddress>();
    for (const email of emails) {
      const key = dedupKey(email);
      if (settled.has(key) || toProbe.has(key)) continue;
      try {
        const parsed = parseAddress(email);
        if (parsed.ok) toProbe.set(key, parsed);
        else settled.set(key, invalidSyntaxOutcome(email));
      } catch {
        settled.set(key, unexpectedErrorOutcome(email, false));
      }
    }
    total = settled.size + toProbe.size;
    onSettled?.(settled.size, total);
    // A known bounce is settled here: no probe, no cache.
    const recalled = await recallFeedback(this.deps.feedback, keyId, toProbe, settled);
    await this.readCache(toProbe, settled);

    const domains = [...new Set([...toProbe.values()].map((parsed) => parsed.domain))];
    const lookups = new Map<string, MailHostsLookup>();
    const lookedUpAt = Date.now();
    const health = this.deps.health;
    // Port 25's state is needed before any session; asked while DNS answers come.
    const egressOpen =
      domains.length === 0 || health === undefined
        ? Promise.resolve(true)
        : Promise.race([health.egressOpen(), aborted(signal).then(() => health.latest().egressOpen)]);
    const looking = Promise.all(
      domains.map(async (domain) => {
        const lookup = await Promise.race([
          this.deps.lookupMailHosts(domain).catch((): MailHostsLookup => ({ kind: 'temp_error', detail: 'lookup failed' })),
          aborted(signal),
        ]);
        if (lookup !== undefined) lookups.set(domain, lookup);
      }),
    );
    // The typo suggester costs CPU time (about 0.2 ms a domain) and depends on the domain alone:
    // once per domain, while the DNS queries are in flight rather than after the last reply.
    const suggestions = new Map(domains.map((domain) => [domain, suggestDomain(domain)]));
    await looking;
    // A negative answer or a failure is believed only from a resolver whose canaries resolved in
    // a check begun after the question was asked: a resolver that starts lying is caught by the
    // first batch it lies to, not up to a minute later.
    const resolverTrusted =
      health === undefined
        ? true
        : [...lookups.values()].some((lookup) => DNS_DECIDES.has(lookup.kind)) || lookups.size < domains.length
          ? await Promise.race([health.resolverTrustedSince(lookedUpAt), aborted(signal).then(() => health.latest().resolverTrusted)])
          : await Promise.race([health.resolverTrusted(), aborted(signal).then(() => health.latest().resolverTrusted)]);
    let canProbe = await egressOpen;

    const controls = new Map<string, string>();
    const probedAt = Date.now();
    const known = canProbe ? await this.knownEvidence(lookups, toProbe) : new Map<string, ControlEvidence>();
    const outcomes = canProbe
      ? await this.probe(toProbe, lookups, controls, { signal, deadlineAt, beforeSession }, known)
      : new Map<string, ProbeOutcome>();
    // No mail server at all could be reached: port 25 may have closed since the last check. A
    // check begun now tells a blocked egress (smtp_unavailable) from servers that are down.
    if (canProbe && health !== undefined && !signal.aborted && outcomes.size > 0 && [...outcomes.values()].every(unreached))
      canProbe = await Promise.race([health.egressOpenSince(probedAt), aborted(signal).then(() => health.latest().egressOpen)]);
    // Evidence from an earlier batch answers in place of controls not asked again.
    for (const [domain, evidence] of known) {
      outcomes.set(controls.get(domain) ?? '', { kind: 'rcpt', reply: evidence.control, server: evidence.server });
      if (evidence.postmaster !== undefined)
        outcomes.set(postmasterOf(domain), { kind: 'rcpt', reply: evidence.postmaster, server: evidence.server });
    }
    if (canProbe && resolverTrusted) await this.keepEvidence(lookups, controls, outcomes, known);
    const findings = new Map<string, DomainFindings>();
    // Written side by side once every address is decided: one Redis round trip each, in parallel.
    const cacheWrites: Array<Promise<void>> = [];
    for (const [key, parsed] of toProbe) {
      try {
        const outcome = this.decideAddress(
          parsed,
          lookups.get(parsed.domain),
          outcomes,
          controls,
          findings,
          signal,
          suggestions.get(parsed.domain),
          { resolverTrusted, canProbe },
        );
        settled.set(key, outcome);
        this.deps.onResult?.(outcome.result);
        const cache = this.deps.cache;
        const seconds = this.keepSeconds(outcome.result.reason, parsed.domain, resolverTrusted, canProbe);
        if (cache !== undefined && seconds !== 0)
          cacheWrites.push(cache.set(outcomeCacheKey(parsed.address), toCachedOutcome(outcome.result), seconds).catch(() => undefined));
      } catch {
        settled.set(key, unexpectedErrorOutcome(parsed.address, true));
      }
    }
    await Promise.all(cacheWrites);
    // The cache keeps what the probe found; the key's reports are applied on top, for this key only.
    applyRecalled(this.deps.feedback, keyId, settled, recalled);
    await rememberVerifications(this.deps.feedback, keyId, settled);
    return settled;
  }

  /**
   * How long an outcome may be cached: 0 for one that may change (not settled), for anything
   * learnt from an untrusted resolver, and for what port 25 could not be asked; a verdict drawn
   * from a negative DNS answer no longer than that answer is kept (its SOA minimum, at most 15
   * minutes); undefined for the cache's own lifetime.
   */
  private keepSeconds(reason: Reason, domain: string, resolverTrusted: boolean, canProbe: boolean): number | undefined {
    if (!SETTLED.has(reason) || !resolverTrusted) return 0;
    if (reason === 'invalid_domain') return this.deps.dnsKeepSeconds?.(domain);
    return canProbe ? undefined : 0;
  }

  private async readCache(toProbe: Map<string, ParsedAddress>, settled: Map<string, VerifyOutcome>): Promise<void> {
    const cache = this.deps.cache;
    if (cache === undefined) return;
    await Promise.all(
      [...toProbe].map(async ([key, parsed]) => {
        // A cache that cannot be read is a miss, never a failed entry.
        const cached = await cache.get(outcomeCacheKey(parsed.address)).catch(() => undefined);
        if (cached === undefined) return;
        settled.set(key, { result: fromCachedOutcome(cached, parsed.address, parsed.local), temporary: false });
        toProbe.delete(key);
      }),
    );
  }

  /** Control evidence kept from earlier batches, for domains whose MX set is the same. */
  private async knownEvidence(
    lookups: Map<string, MailHostsLookup>,
    toProbe: Map<string, ParsedAddress>,
  ): Promise<Map<string, ControlEvidence>> {
    const known = new Map<string, ControlEvidence>();
    const store = this.deps.evidence;
    if (store === undefined) return known;
    const domains = new Set([...toProbe.values()].map((parsed) => parsed.domain));
    await Promise.all(
      [...domains].map(async (domain) => {
        const lookup = lookups.get(domain);
        if (!probed(lookup)) return;
        const evidence = await store.get(domain).catch(() => undefined);
        if (evidence !== undefined && evidence.mxSet === mxSetOf(lookup.hosts)) known.set(domain, evidence);
      }),
    );
    return known;
  }

  /** Keeps what this batch's controls showed, when definite, for the next batches. */
  private async keepEvidence(
    lookups: Map<string, MailHostsLookup>,
    controls: Map<string, string>,
    outcomes: Map<string, ProbeOutcome>,
    known: Map<string, ControlEvidence>,
  ): Promise<void> {
    const store = this.deps.evidence;
    if (store === undefined) return;
    const writes: Array<Promise<void>> = [];
    for (const [domain, control] of controls) {
      const lookup = lookups.get(domain);
      const answer = outcomes.get(control);
      if (known.has(domain) || !probed(lookup) || answer?.kind !== 'rcpt' || !definite(answer.reply)) continue;
      const postmaster = outcomes.get(postmasterOf(domain));
      const samePostmaster = postmaster?.kind === 'rcpt' && postmaster.server === answer.server && definite(postmaster.reply);
      writes.push(
        store
          .set(domain, {
            mxSet: mxSetOf(lookup.hosts),
            server: answer.server,
            control: answer.reply,
            ...(samePostmaster ? { postmaster: postmaster.reply } : {}),
          })
          .catch(() => undefined),
      );
    }
    await Promise.all(writes);
  }

  /** Domains sharing an MX set share sessions; each domain's control goes first, then its addresses. */
  private async probe(
    toProbe: Map<string, ParsedAddress>,
    lookups: Map<string, MailHostsLookup>,
    controls: Map<string, string>,
    call: Omit<ProbeContext, 'limits'>,
    known: Map<string, ControlEvidence>,
  ): Promise<Map<string, ProbeOutcome>> {
    const groups = new Map<string, { hosts: MailHost[]; byDomain: Map<string, string[]> }>();
    for (const parsed of toProbe.values()) {
      const lookup = lookups.get(parsed.domain);
      if (!probed(lookup)) continue;
      const groupKey = lookup.hosts.map((host) => host.name).join(' ');
      const group = groups.get(groupKey) ?? { hosts: lookup.hosts, byDomain: new Map<string, string[]>() };
      groups.set(groupKey, group);
      if (!controls.has(parsed.domain)) controls.set(parsed.domain, controlAddress(parsed.domain, this.deps.controlSeed));
      const addresses = group.byDomain.get(parsed.domain) ?? [];
      if (!addresses.includes(parsed.address)) addresses.push(parsed.address);
      group.byDomain.set(parsed.domain, addresses);
    }
    const outcomes = new Map<string, ProbeOutcome>();
    const limits = new Map<string, ServerLimits>();
    await Promise.all(
      [...groups.values()].map(async (group) => {
        const recipients = [...group.byDomain].flatMap(([domain, addresses]) =>
          known.has(domain) ? addresses : [controls.get(domain) ?? '', postmasterOf(domain), ...addresses],
        );
        const found = await probeMailServers(group.hosts, [...new Set(recipients)], this.deps.probe, { ...call, limits }).catch(
          () => new Map<string, ProbeOutcome>(),
        );
        for (const [recipient, outcome] of found) outcomes.set(recipient, outcome);
      }),
    );
    return outcomes;
  }

  private decideAddress(
    parsed: ParsedAddress,
    lookup: MailHostsLookup | undefined,
    outcomes: Map<string, ProbeOutcome>,
    controls: Map<string, string>,
    findings: Map<string, DomainFindings>,
    signal: AbortSignal,
    suggestedDomain: string | undefined,
    sight: { resolverTrusted: boolean; canProbe: boolean },
  ): VerifyOutcome {
    const dns = dnsOutcome(lookup);
    const outcome = outcomes.get(parsed.address);
    let smtp: SmtpOutcome = 'not_probed';
    let catchAll: boolean | null = null;
    if (dns === 'ok' && !sight.canProbe) smtp = 'unavailable';
    else if (dns === 'ok') {
      const domainFindings = findings.get(parsed.domain) ?? weighDomain(parsed.domain, controls, outcomes);
      findings.set(parsed.domain, domainFindings);
      smtp = smtpOutcome(outcome, domainFindings.mailboxes.get(parsed.address)?.class, signal);
      catchAll = domainFindings.catchAll;
    }
    const facts: AddressFacts = {
      syntaxOk: true,
      disposable: isDisposableDomain(parsed.domain),
      role: isRoleAccount(parsed.local),
      free: isFreeProvider(parsed.domain),
      dns,
      smtp,
      catchAll,
      resolverTrusted: sight.resolverTrusted,
    };
    return probedOutcome(parsed, facts, lookup, outcome, suggestedDomain);
  }
}

const mxSetOf = (hosts: MailHost[]): string => hosts.map((host) => host.name).join(' ');

/** A probe that reached no mail server. */
const unreached = (outcome: ProbeOutcome): boolean => outcome.kind === 'no_connect' || outcome.kind === 'timeout';

/** `postmaster@` of a domain: a mailbox RFC 5321 §4.5.1 requires, asked beside the control as a known one. */
const postmasterOf = (domain: string): string => `postmaster@${domain}`;

/** The replies of the server that answered the domain's control, weighed together (evidence.ts). */
function weighDomain(domain: string, controls: Map<string, string>, outcomes: Map<string, ProbeOutcome>): DomainFindings {
  const control = outcomes.get(controls.get(domain) ?? '');
  if (control?.kind !== 'rcpt') return weighEvidence({ mailboxes: new Map() });
  const sameServer = (outcome: ProbeOutcome | undefined) =>
    outcome?.kind === 'rcpt' && outcome.server === control.server ? outcome : undefined;
  const mailboxes = new Map<string, SmtpReply>();
  const suffix = `@${domain}`;
  for (const [recipient, outcome] of outcomes) {
    const answered = sameServer(outcome);
    if (recipient.endsWith(suffix) && recipient !== controls.get(domain) && recipient !== postmasterOf(domain) && answered)
      mailboxes.set(recipient, answered.reply);
  }
  const postmaster = sameServer(outcomes.get(postmasterOf(domain)))?.reply;
  return weighEvidence({ control: control.reply, ...(postmaster === undefined ? {} : { postmaster }), mailboxes });
}

function smtpOutcome(outcome: ProbeOutcome | undefined, weighed: SmtpOutcome | undefined, signal: AbortSignal): SmtpOutcome {
  if (outcome === undefined) return signal.aborted ? 'timeout' : 'error';
  // A reply that throttles the provider says nothing of the mailbox: it was not really asked.
  if (outcome.kind === 'throttled' || ('reply' in outcome && throttlesProvider(outcome.reply))) return 'throttled';
  if (outcome.kind === 'rcpt') return weighed ?? readRcptReply(outcome.reply).class;
  if (outcome.kind === 'session') return classifySessionReply(outcome.reply);
  return outcome.kind;
}

function aborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
}
