/**
 * Phase 6, decide: each address's facts (syntax, DNS, what its server said weighed against the
 * domain's controls, catch-all, disposable, role, free) turned into its result (results.ts). An
 * address whose decision throws is that entry's `unexpected_error`. What may be cached is noted
 * for the store phase.
 */
import type { VerifyOutcome } from '@svc/contracts';
import {
  classifySessionReply,
  isDisposableDomain,
  isFreeProvider,
  isRoleAccount,
  readRcptReply,
  weighEvidence,
  type AddressFacts,
  type DnsOutcome,
  type DomainFindings,
  type ParsedAddress,
  type SmtpOutcome,
  type SmtpReply,
} from '../../checks/index.ts';
import { throttlesProvider } from '../../checks/throttle-replies.ts';
import { outcomeCacheKey, toCachedOutcome } from '../../cache/cached-outcome.ts';
import type { MailHostsLookup } from '../../dns/resolver.ts';
import type { BatchState, Sight } from '../batch-state.ts';
import { postmasterOf } from '../control-address.ts';
import type { ProbeOutcome } from '../mail-server-probe.ts';
import { probedOutcome, unexpectedErrorOutcome } from '../results.ts';
import type { VerifierDeps } from '../verifier-deps.ts';
import { isProbed } from './resolve.ts';
import { keepSeconds } from './store.ts';

export function decidePhase(batch: BatchState, deps: Pick<VerifierDeps, 'onResult' | 'cache' | 'dnsKeepSeconds'>): void {
  const findings = new Map<string, DomainFindings>();
  for (const [key, parsed] of batch.toProbe) {
    try {
      const outcome = decideAddress({
        parsed,
        lookup: batch.lookups.get(parsed.domain),
        outcomes: batch.outcomes,
        controls: batch.controls,
        findings,
        signal: batch.call.signal,
        suggestedDomain: batch.suggestions.get(parsed.domain),
        sight: batch.sight,
      });
      batch.settled.set(key, outcome);
      deps.onResult?.(outcome.result);
      const seconds = keepSeconds(outcome.result.reason, parsed.domain, batch.sight, deps.dnsKeepSeconds);
      if (deps.cache !== undefined && seconds !== 0)
        batch.cacheWrites.push({ key: outcomeCacheKey(parsed.address), value: toCachedOutcome(outcome.result), seconds });
    } catch {
      batch.settled.set(key, unexpectedErrorOutcome(parsed.address, true));
    }
  }
}

/** What one address's decision reads. */
export interface AddressEvidence {
  parsed: ParsedAddress;
  lookup: MailHostsLookup | undefined;
  /** What the servers said, by recipient (addresses and controls). */
  outcomes: Map<string, ProbeOutcome>;
  controls: Map<string, string>;
  /** Each domain's replies weighed once, shared by its addresses (filled as they are decided). */
  findings: Map<string, DomainFindings>;
  signal: AbortSignal;
  suggestedDomain: string | undefined;
  sight: Sight;
}

export function decideAddress(evidence: AddressEvidence): VerifyOutcome {
  const { parsed, lookup, outcomes, findings, sight } = evidence;
  const dns = dnsOutcome(lookup);
  const outcome = outcomes.get(parsed.address);
  let smtp: SmtpOutcome = 'not_probed';
  let catchAll: boolean | null = null;
  if (dns === 'ok' && !sight.canProbe) smtp = 'unavailable';
  else if (dns === 'ok') {
    const domainFindings = findings.get(parsed.domain) ?? weighDomain(parsed.domain, evidence.controls, outcomes);
    findings.set(parsed.domain, domainFindings);
    smtp = smtpOutcome(outcome, domainFindings.mailboxes.get(parsed.address)?.class, evidence.signal);
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
  return probedOutcome(parsed, facts, lookup, outcome, evidence.suggestedDomain);
}

function dnsOutcome(lookup: MailHostsLookup | undefined): DnsOutcome {
  if (lookup === undefined) return 'timeout';
  return isProbed(lookup) ? 'ok' : lookup.kind;
}

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
