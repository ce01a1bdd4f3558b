/**
 * One batch, end to end: parse every entry, probe each distinct address once, group domains by
 * their mail servers so one session carries many RCPTs (plus one catch-all probe per domain),
 * and answer within the batch deadline: whatever is unfinished then is `risky`/`timeout`.
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { VerifyResult } from '@svc/contracts';
import {
  classifyRcptReply,
  classifySessionReply,
  decide,
  isDisposableDomain,
  isFreeProvider,
  isRoleAccount,
  normaliseForDedup,
  parseAddress,
  score,
  suggestAddress,
  type AddressFacts,
  type DnsOutcome,
  type ParsedAddress,
  type SmtpOutcome,
} from '../checks/index.ts';
import type { MailHostsLookup } from '../dns/resolver.ts';
import { probeMailServers, type MailServerProbeDeps, type ProbeOutcome } from './mail-server-probe.ts';

export interface VerifierDeps {
  lookupMailHosts: (domain: string) => Promise<MailHostsLookup>;
  probe: MailServerProbeDeps;
  batchDeadlineMs: number;
  /** Cache of settled outcomes by normalised address (never timeouts or temporary states). */
  cache?: { get(key: string): Promise<VerifyResult | undefined>; set(key: string, value: VerifyResult): Promise<void> };
  onResult?: (result: VerifyResult) => void;
  /**
   * Local part of the catch-all probe at a domain (default: random each time). Lists retry
   * greylisted answers, and a greylisting server only lets through a recipient it saw before, so
   * their probe must stay the same across attempts.
   */
  catchAllLocalPart?: (domain: string) => string;
}

/** Outcomes worth remembering: they will not change on the next try. */
const SETTLED = new Set([
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

function dnsOutcome(lookup: MailHostsLookup | undefined): DnsOutcome {
  if (lookup === undefined) return 'timeout';
  if (lookup.kind === 'mx' || lookup.kind === 'implicit') return 'ok';
  return lookup.kind;
}

function smtpOutcome(outcome: ProbeOutcome | undefined, probed: boolean): SmtpOutcome {
  if (outcome === undefined) return probed ? 'timeout' : 'not_probed';
  if (outcome.kind === 'rcpt') return classifyRcptReply(outcome.reply);
  if (outcome.kind === 'session') return classifySessionReply(outcome.reply);
  return outcome.kind;
}

function catchAllFrom(outcome: ProbeOutcome | undefined): boolean | null {
  if (outcome?.kind !== 'rcpt') return null;
  const verdict = classifyRcptReply(outcome.reply);
  return verdict === 'accepted' ? true : verdict === 'rejected_unknown' ? false : null;
}

function buildResult(email: string, parsed: ParsedAddress | undefined, facts: AddressFacts, mx: string[]): VerifyResult {
  const didYouMean = parsed === undefined ? undefined : suggestAddress(parsed.local, parsed.domain);
  const decision = decide(facts);
  return {
    email,
    score: score(facts, decision, didYouMean !== undefined),
    verdict: decision.verdict,
    reason: decision.reason,
    checks: {
      syntax: facts.syntaxOk,
      domainExists:
        facts.dns === 'ok' || facts.dns === 'no_mail_host' || facts.dns === 'null_mx' ? true : facts.dns === 'nxdomain' ? false : null,
      mx,
      smtp: decision.smtp,
      catchAll: facts.catchAll,
      disposable: facts.disposable,
      role: facts.role,
      free: facts.free,
    },
    ...(didYouMean === undefined ? {} : { didYouMean }),
  };
}

export class Verifier {
  constructor(private readonly deps: VerifierDeps) {}

  async verify(emails: string[], options: { deadlineAt: number; signal: AbortSignal }): Promise<VerifyResult[]> {
    const deadlineAt = Math.min(options.deadlineAt, Date.now() + this.deps.batchDeadlineMs) - ANSWER_MARGIN_MS;
    const controller = new AbortController();
    setMaxListeners(0, controller.signal); // one listener per concurrent session, by design
    const timer = setTimeout(() => controller.abort(new Error('batch deadline')), Math.max(0, deadlineAt - Date.now()));
    const onOuterAbort = () => controller.abort(options.signal.reason);
    options.signal.addEventListener('abort', onOuterAbort, { once: true });
    try {
      const byKey = await this.verifyDistinct(emails, controller.signal);
      return emails.map((email) => ({ ...byKey.get(normaliseForDedup(email))!, email }));
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onOuterAbort);
    }
  }

  private async verifyDistinct(emails: string[], signal: AbortSignal): Promise<Map<string, VerifyResult>> {
    const results = new Map<string, VerifyResult>();
    const toProbe = new Map<string, ParsedAddress>();
    for (const email of emails) {
      const key = normaliseForDedup(email);
      if (results.has(key) || toProbe.has(key)) continue;
      const parsed = parseAddress(email);
      if (!parsed.ok) {
        results.set(
          key,
          buildResult(
            email,
            undefined,
            { syntaxOk: false, disposable: false, role: false, free: false, dns: 'ok', smtp: 'not_probed', catchAll: null },
            [],
          ),
        );
        continue;
      }
      const cached = await this.deps.cache?.get(key);
      if (cached !== undefined) results.set(key, cached);
      else toProbe.set(key, parsed);
    }

    const domains = [...new Set([...toProbe.values()].map((parsed) => parsed.domain))];
    const lookups = new Map<string, MailHostsLookup>();
    await Promise.all(
      domains.map(async (domain) => {
        const lookup = await Promise.race([this.deps.lookupMailHosts(domain), aborted(signal)]);
        if (lookup !== undefined) lookups.set(domain, lookup);
      }),
    );

    // Domains sharing an MX set share sessions; each domain adds one random RCPT (catch-all test).
    const groups = new Map<string, { hosts: string[]; recipients: Set<string> }>();
    const catchAllProbe = new Map<string, string>();
    for (const parsed of toProbe.values()) {
      const lookup = lookups.get(parsed.domain);
      if (lookup?.kind !== 'mx' && lookup?.kind !== 'implicit') continue;
      const groupKey = lookup.hosts.join(' ');
      const group = groups.get(groupKey) ?? { hosts: lookup.hosts, recipients: new Set<string>() };
      if (!catchAllProbe.has(parsed.domain)) {
        const probe = `${this.deps.catchAllLocalPart?.(parsed.domain) ?? randomBytes(9).toString('hex')}@${parsed.domain}`;
        catchAllProbe.set(parsed.domain, probe);
        group.recipients.add(probe);
      }
      group.recipients.add(parsed.address);
      groups.set(groupKey, group);
    }
    const outcomes = new Map<string, ProbeOutcome>();
    await Promise.all(
      [...groups.values()].map(async (group) => {
        const found = await probeMailServers(group.hosts, [...group.recipients], this.deps.probe, signal).catch(
          () => new Map<string, ProbeOutcome>(),
        );
        for (const [recipient, outcome] of found) outcomes.set(recipient, outcome);
      }),
    );

    for (const [key, parsed] of toProbe) {
      const lookup = lookups.get(parsed.domain);
      const dns = dnsOutcome(lookup);
      const probed = dns === 'ok';
      const facts: AddressFacts = {
        syntaxOk: true,
        disposable: isDisposableDomain(parsed.domain),
        role: isRoleAccount(parsed.local),
        free: isFreeProvider(parsed.domain),
        dns,
        smtp: smtpOutcome(outcomes.get(parsed.address), probed),
        catchAll: probed ? catchAllFrom(outcomes.get(catchAllProbe.get(parsed.domain)!)) : null,
      };
      const mx = lookup?.kind === 'mx' || lookup?.kind === 'implicit' ? lookup.hosts : [];
      const result = buildResult(parsed.address, parsed, facts, mx);
      results.set(key, result);
      this.deps.onResult?.(result);
      if (SETTLED.has(result.reason)) await this.deps.cache?.set(key, result);
    }
    return results;
  }
}

function aborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
}
