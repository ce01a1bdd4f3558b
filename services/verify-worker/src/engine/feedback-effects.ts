/**
 * What the key reported of its sends, applied to a verification (docs/feedback.md). Three calls
 * the verifier makes: `recallFeedback` at entry (a known bounce is settled here, without any
 * SMTP probe), `answerFromFeedback` on each decided outcome (complainer, known delivery,
 * probability, `checks.history`), and `rememberVerifications` at the end (the key's history, the
 * catch-all domains found). The store failing never fails a verification: it answers as if
 * nothing was reported.
 */
import type { VerifyOutcome, VerifyResult } from '@svc/contracts';
import { normaliseAddress, scoreWithProbability, type Feedback, type Recollection } from '@svc/feedback';
import { REASON_POINTS, isDisposableDomain, isFreeProvider, isRoleAccount, type ParsedAddress } from '../checks/index.ts';

/** Recollections by normalised address; empty when no key or no store. */
export type Recalled = Map<string, Recollection>;

export async function recallFeedback(
  feedback: Feedback | undefined,
  keyId: string | undefined,
  toProbe: Map<string, ParsedAddress>,
  settled: Map<string, VerifyOutcome>,
): Promise<Recalled> {
  if (feedback === undefined || keyId === undefined || toProbe.size === 0) return new Map();
  const recalled = await feedback
    .recall(
      keyId,
      [...toProbe.values()].map((parsed) => parsed.address),
    )
    .catch((): Recalled => new Map());
  for (const [key, parsed] of toProbe) {
    const recollection = recalled.get(normaliseAddress(parsed.address) ?? '');
    if (recollection?.effect !== 'known_bounce') continue;
    settled.set(key, knownBounceOutcome(parsed, recollection));
    toProbe.delete(key);
  }
  return recalled;
}

function knownBounceOutcome(parsed: ParsedAddress, recollection: Recollection): VerifyOutcome {
  return {
    result: {
      email: parsed.address,
      score: REASON_POINTS.known_bounce,
      verdict: 'undeliverable',
      reason: 'known_bounce',
      checks: {
        syntax: true,
        domainExists: null,
        mx: null,
        smtp: null,
        catchAll: null,
        disposable: isDisposableDomain(parsed.domain),
        role: isRoleAccount(parsed.local),
        free: isFreeProvider(parsed.domain),
        provider: null,
        history: recollection.history,
      },
    },
    temporary: false,
  };
}

/** An outcome as the key's reports change it; unchanged (but for `checks.history: null`) without any. */
export function answerFromFeedback(outcome: VerifyOutcome, recollection: Recollection | undefined): VerifyOutcome {
  const result: VerifyResult = { ...outcome.result, checks: { ...outcome.result.checks, history: recollection?.history ?? null } };
  if (recollection === undefined || result.reason === 'known_bounce' || result.checks.syntax === false) return { ...outcome, result };
  // A proven dead mailbox stays dead; otherwise a complaint says more than any probe.
  if (recollection.effect === 'complainer' && result.verdict !== 'undeliverable')
    return { result: { ...result, verdict: 'risky', reason: 'complainer', score: REASON_POINTS.complainer }, temporary: false };
  const catchAllAnswer = result.reason === 'accept_all' || (result.checks.catchAll === true && result.verdict === 'risky');
  if (recollection.effect === 'delivered' && catchAllAnswer)
    return {
      result: { ...result, verdict: 'deliverable', reason: 'known_delivery', score: REASON_POINTS.known_delivery },
      temporary: false,
    };
  if (result.reason === 'accept_all')
    return {
      ...outcome,
      result: { ...result, probability: recollection.probability, score: scoreWithProbability(result.score, recollection.probability) },
    };
  return { ...outcome, result };
}

/** Every outcome of a key's verification as its reports change it; a verification for no key (internal callers) unchanged. */
export function applyRecalled(
  feedback: Feedback | undefined,
  keyId: string | undefined,
  settled: Map<string, VerifyOutcome>,
  recalled: Recalled,
): void {
  if (feedback === undefined || keyId === undefined) return;
  for (const [key, outcome] of settled)
    settled.set(key, answerFromFeedback(outcome, recalled.get(normaliseAddress(outcome.result.email) ?? '')));
}

/** The key's verifications into its history, and the catch-all domains found into its rate. */
export async function rememberVerifications(
  feedback: Feedback | undefined,
  keyId: string | undefined,
  settled: Map<string, VerifyOutcome>,
): Promise<void> {
  if (feedback === undefined || keyId === undefined) return;
  const verified = [...settled.values()]
    .filter(({ result, temporary }) => result.checks.syntax && !temporary)
    .map(({ result }) => ({
      address: result.email,
      verdict: result.verdict,
      reason: result.reason,
      score: result.score,
      catchAll: result.checks.catchAll,
    }));
  await feedback.remember(keyId, verified).catch(() => undefined);
}
