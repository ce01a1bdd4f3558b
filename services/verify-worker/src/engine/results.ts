/**
 * From what was learnt about an address to its public result, and whether that outcome is
 * temporary (worth another try later) with the delay the deciding reply asked for.
 * A check that was not made is `null`, never a guess.
 */
import { REASON_POINTS, clampToBand, decide, isTransient, retryAfterSeconds, score, type AddressFacts } from '../checks/index.ts';
import type { ParsedAddress } from '../checks/index.ts';
import { providerOf } from '../checks/provider.ts';
import type { Reason, VerifyOutcome, VerifyResult } from '@svc/contracts';
import type { MailHostsLookup } from '../dns/resolver.ts';
import type { ProbeOutcome } from './mail-server-probe.ts';

const NOT_CHECKED = {
  domainExists: null,
  mx: null,
  smtp: null,
  catchAll: null,
  disposable: null,
  role: null,
  free: null,
  provider: null,
} as const;

export function invalidSyntaxOutcome(email: string): VerifyOutcome {
  return {
    result: { email, score: 0, verdict: 'undeliverable', reason: 'invalid_syntax', checks: { syntax: false, ...NOT_CHECKED } },
    temporary: false,
  };
}

/** An entry whose processing failed unexpectedly: that entry alone is `risky`/`unexpected_error`. */
export function unexpectedErrorOutcome(email: string, syntax: boolean): VerifyOutcome {
  return {
    result: {
      email,
      score: clampToBand('risky', REASON_POINTS.unexpected_error),
      verdict: 'risky',
      reason: 'unexpected_error',
      checks: { syntax, ...NOT_CHECKED },
    },
    temporary: true,
  };
}

function mxNames(lookup: MailHostsLookup | undefined): string[] | null {
  if (lookup === undefined) return null;
  if (lookup.kind === 'null_mx' || lookup.kind === 'nxdomain') return [];
  return lookup.names ?? null;
}

function domainExists(lookup: MailHostsLookup | undefined, resolverTrusted: boolean): boolean | null {
  if (lookup === undefined) return null;
  // An untrusted resolver's "no such domain" is not knowledge.
  if (!resolverTrusted && lookup.kind === 'nxdomain') return null;
  if (lookup.kind === 'nxdomain') return false;
  if (lookup.kind === 'temp_error' || lookup.kind === 'timeout') return lookup.names === undefined ? null : true;
  return true;
}

const TEMPORARY_SMTP: ReadonlySet<AddressFacts['smtp']> = new Set<AddressFacts['smtp']>([
  'greylisted',
  'temporary',
  'timeout',
  'no_connect',
  'error',
  'unavailable',
  'throttled',
]);

/** Verdicts the verifier gave because it could not see: worth another try once it can. */
const BLIND: ReadonlySet<Reason> = new Set<Reason>(['dns_unavailable', 'smtp_unavailable']);

function isTemporary(facts: AddressFacts, reason: Reason, deciding: ProbeOutcome | undefined): boolean {
  if (facts.dns === 'temp_error' || facts.dns === 'timeout' || BLIND.has(reason)) return true;
  if (facts.dns !== 'ok') return false;
  if (TEMPORARY_SMTP.has(facts.smtp)) return true;
  // A 4xx that the table read otherwise (452 4.2.2 over quota) is temporary too.
  return deciding !== undefined && 'reply' in deciding && isTransient(deciding.reply);
}

/** `suggestedDomain`: the likely intended domain when the typo suggester found one. */
export function probedOutcome(
  parsed: ParsedAddress,
  facts: AddressFacts,
  lookup: MailHostsLookup | undefined,
  deciding: ProbeOutcome | undefined,
  suggestedDomain: string | undefined,
): VerifyOutcome {
  const didYouMean = suggestedDomain === undefined ? undefined : `${parsed.local}@${suggestedDomain}`;
  const decision = decide(facts);
  const trusted = facts.resolverTrusted !== false;
  const mx = trusted || lookup === undefined || (lookup.kind !== 'nxdomain' && lookup.kind !== 'null_mx') ? mxNames(lookup) : null;
  const result: VerifyResult = {
    email: parsed.address,
    score: score(facts, decision, didYouMean !== undefined),
    verdict: decision.verdict,
    reason: decision.reason,
    checks: {
      syntax: true,
      domainExists: domainExists(lookup, trusted),
      mx,
      smtp: decision.smtp,
      catchAll: facts.dns === 'ok' ? facts.catchAll : null,
      disposable: facts.disposable,
      role: facts.role,
      free: facts.free,
      provider: lookup?.kind === 'implicit' ? null : providerOf(mx),
    },
    ...(didYouMean === undefined ? {} : { didYouMean }),
  };
  const temporary = isTemporary(facts, decision.reason, deciding);
  const asked =
    !temporary || deciding === undefined
      ? undefined
      : deciding.kind === 'throttled'
        ? Math.max(1, Math.ceil((deciding.until - Date.now()) / 1_000))
        : 'reply' in deciding
          ? retryAfterSeconds(deciding.reply.text)
          : undefined;
  // The deadline came before any session carried it: a timeout that says nothing of the server.
  const unasked = temporary && deciding?.kind === 'timeout' && deciding.unasked === true;
  return { result, temporary, ...(asked === undefined ? {} : { retryAfterSeconds: asked }), ...(unasked ? { unasked: true } : {}) };
}
