/**
 * One batch, end to end, as a pipeline of named phases over one BatchState (batch-state.ts), each
 * in its own file under phases/:
 *   parse    every entry once; bad syntax settled here
 *   cache    a reported bounce or a cached outcome settles an address without a probe
 *   resolve  each domain's mail hosts; port 25's state asked meanwhile
 *   trust    whether the resolver's answers and port 25 can be believed for this batch
 *   probe    the mail servers asked, domains sharing an MX set in shared sessions, each domain's
 *            control and postmaster first (or an earlier batch's evidence for them)
 *   decide   each address's replies weighed with the evidence rule into its result
 *   store    cacheable outcomes written, the calling key's reports applied
 * The whole batch answers within its deadline: whatever is unfinished then is `risky`/`timeout`.
 * Any string is a result, and no entry can fail the batch: an entry whose processing throws is
 * that entry's `unexpected_error`.
 */
import { setMaxListeners } from 'node:events';
import { dedupKey, type VerifyOptions, type VerifyOutcome, type VerifyResult } from '@svc/contracts';
import { deadlineSignal } from '@svc/jobs';
import { BatchState, type BatchCall } from './batch-state.ts';
import { cachePhase } from './phases/cache.ts';
import { decidePhase } from './phases/decide.ts';
import { parsePhase } from './phases/parse.ts';
import { probePhase } from './phases/probe.ts';
import { resolvePhase } from './phases/resolve.ts';
import { storePhase } from './phases/store.ts';
import { trustPhase } from './phases/trust.ts';
import { unexpectedErrorOutcome } from './results.ts';
import type { VerifierDeps } from './verifier-deps.ts';

export type { VerifyOptions, VerifyOutcome } from '@svc/contracts';
export type { VerifierDeps, VerifierHealth } from './verifier-deps.ts';

/** Time kept back from the deadline to assemble and send the answer. */
const ANSWER_MARGIN_MS = 250;

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
      const { beforeSession, keyId, onSettled, freshConnection } = options;
      byKey = await this.verifyDistinct(emails, { signal, deadlineAt, beforeSession, keyId, onSettled, freshConnection });
    } finally {
      release();
    }
    return emails.map((email) => {
      const outcome = byKey.get(dedupKey(email)) ?? unexpectedErrorOutcome(email, false);
      return { ...outcome, result: { ...outcome.result, email } };
    });
  }

  /** The phases, in order: each reads what the ones before it left in the batch's state. */
  private async verifyDistinct(emails: string[], call: BatchCall): Promise<Map<string, VerifyOutcome>> {
    const batch = new BatchState(call);
    parsePhase(emails, batch);
    await cachePhase(batch, this.deps);
    await resolvePhase(batch, this.deps);
    await trustPhase(batch, this.deps);
    await probePhase(batch, this.deps);
    decidePhase(batch, this.deps);
    await storePhase(batch, this.deps);
    return batch.settled;
  }
}
