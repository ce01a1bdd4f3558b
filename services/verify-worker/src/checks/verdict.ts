/**
 * The verdict rules of docs/api.md ("Verdicts"). `undeliverable` only on proof (bad syntax, a domain that
 * cannot receive mail, a mailbox rejected as unknown or disabled); `deliverable` only when a
 * server accepted that exact mailbox at a domain that is neither catch-all nor disposable;
 * everything else `risky`.
 *
 * Precedence decisions: proof of a missing mailbox wins over everything (a rejected address at a
 * disposable domain is still undeliverable); then disposable; then catch-all. An accepted role
 * mailbox is `risky`/`role_account`: it receives mail, but list cleaners and sending providers
 * treat function mailboxes as poor recipients. A catch-all probe that could not be answered
 * leaves an accepted mailbox `risky`/`accept_all`: the acceptance may mean nothing. A host that
 * does not take mail for the domain (relaying denied) is `risky`/`no_connect`: no mail server of
 * the domain could be asked. `checks.smtp` is `null` when no server was asked about the mailbox.
 *
 * The verifier's own blind spots (docs/verification.md): while the resolver is untrusted (its
 * canaries do not resolve), what DNS would have declared dead, and any DNS failure, is
 * `risky`/`dns_unavailable`; while no canary mail server can be reached (port 25 blocked), what
 * SMTP would have decided is `risky`/`smtp_unavailable`. Neither says anything of the address.
 */
import type { Reason, Verdict } from '@svc/contracts';
import type { RcptClass } from './smtp-replies.ts';

export type DnsOutcome = 'ok' | 'nxdomain' | 'null_mx' | 'no_mail_host' | 'temp_error' | 'timeout';
/**
 * `no_target`: every address of the domain's mail hosts was refused by the private-address guard.
 * `needs_smtputf8`: a UTF-8 local part and no server offering SMTPUTF8, so it was never sent.
 * `unavailable`: this worker cannot reach port 25 (egress health), so no server was asked.
 */
export type SmtpOutcome =
  | RcptClass
  | 'timeout'
  | 'no_connect'
  | 'no_target'
  | 'not_probed'
  | 'needs_smtputf8'
  | 'unavailable'
  | 'error'
  /** The provider throttled this egress (or its budget ran out) before the mailbox was answered. */
  | 'throttled';

export interface AddressFacts {
  syntaxOk: boolean;
  disposable: boolean;
  role: boolean;
  free: boolean;
  dns: DnsOutcome;
  smtp: SmtpOutcome;
  /** null when not learnt (no probe answer). */
  catchAll: boolean | null;
  /** false while the resolver is untrusted (resolver health); absent means trusted. */
  resolverTrusted?: boolean;
}

export interface Decision {
  verdict: Verdict;
  reason: Reason;
  smtp: 'accepted' | 'rejected' | 'unknown' | null;
}

/** Outcomes where no mail server was asked about this mailbox. */
const NOT_ASKED: ReadonlySet<SmtpOutcome> = new Set<SmtpOutcome>(['not_probed', 'no_target', 'needs_smtputf8', 'unavailable', 'throttled']);

const RISKY_SMTP: Partial<Record<SmtpOutcome, Reason>> = {
  full: 'mailbox_full',
  greylisted: 'greylisted',
  temporary: 'greylisted',
  blocked: 'smtp_blocked',
  timeout: 'timeout',
  no_connect: 'no_connect',
  no_target: 'no_connect',
  not_this_host: 'no_connect',
  inconclusive: 'accept_all',
  unavailable: 'smtp_unavailable',
  throttled: 'throttled',
};

function smtpCheck(facts: AddressFacts): Decision['smtp'] {
  if (!facts.syntaxOk || facts.dns !== 'ok' || NOT_ASKED.has(facts.smtp)) return null;
  if (facts.smtp === 'accepted') return 'accepted';
  return facts.smtp === 'rejected_unknown' || facts.smtp === 'disabled' ? 'rejected' : 'unknown';
}

export function decide(facts: AddressFacts): Decision {
  const smtp = smtpCheck(facts);
  const verdict = (verdict: Verdict, reason: Reason): Decision => ({ verdict, reason, smtp });
  if (!facts.syntaxOk) return verdict('undeliverable', 'invalid_syntax');
  const blindDns = facts.resolverTrusted === false;
  if (facts.dns === 'nxdomain' || facts.dns === 'null_mx' || facts.dns === 'no_mail_host')
    return blindDns ? verdict('risky', 'dns_unavailable') : verdict('undeliverable', 'invalid_domain');
  if (blindDns && (facts.dns === 'timeout' || facts.dns === 'temp_error')) return verdict('risky', 'dns_unavailable');
  if (facts.smtp === 'rejected_unknown') return verdict('undeliverable', 'rejected_email');
  if (facts.smtp === 'disabled') return verdict('undeliverable', 'mailbox_disabled');
  if (facts.disposable) return verdict('risky', 'disposable');
  if (facts.dns === 'timeout') return verdict('risky', 'timeout');
  if (facts.dns === 'temp_error') return verdict('risky', 'unexpected_error');
  if (facts.smtp === 'accepted') {
    if (facts.catchAll !== false) return verdict('risky', 'accept_all');
    return facts.role ? verdict('risky', 'role_account') : verdict('deliverable', 'accepted_email');
  }
  return verdict('risky', RISKY_SMTP[facts.smtp] ?? 'unexpected_error');
}
