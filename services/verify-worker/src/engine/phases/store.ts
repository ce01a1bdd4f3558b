/**
 * Phase 7, store: the outcomes worth keeping written to the cache side by side (one Redis round
 * trip each, in parallel), then the calling key's reports applied on top for this key only, and
 * its history kept (feedback-effects.ts). A cache that cannot be written loses nothing but time.
 */
import type { Reason } from '@svc/contracts';
import type { BatchState, Sight } from '../batch-state.ts';
import { applyRecalled, rememberVerifications } from '../feedback-effects.ts';
import type { VerifierDeps } from '../verifier-deps.ts';

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

/**
 * How long an outcome may be cached: 0 for one that may change (not settled), for anything
 * learnt from an untrusted resolver, and for what port 25 could not be asked; a verdict drawn
 * from a negative DNS answer no longer than that answer is kept (its SOA minimum, at most 15
 * minutes); undefined for the cache's own lifetime.
 */
export function keepSeconds(
  reason: Reason,
  domain: string,
  sight: Sight,
  dnsKeepSeconds: VerifierDeps['dnsKeepSeconds'],
): number | undefined {
  if (!SETTLED.has(reason) || !sight.resolverTrusted) return 0;
  if (reason === 'invalid_domain') return dnsKeepSeconds?.(domain);
  return sight.canProbe ? undefined : 0;
}

export async function storePhase(batch: BatchState, deps: Pick<VerifierDeps, 'cache' | 'feedback'>): Promise<void> {
  const cache = deps.cache;
  if (cache !== undefined)
    await Promise.all(batch.cacheWrites.map(({ key, value, seconds }) => cache.set(key, value, seconds).catch(() => undefined)));
  const { keyId } = batch.call;
  applyRecalled(deps.feedback, keyId, batch.settled, batch.recalled);
  await rememberVerifications(deps.feedback, keyId, batch.settled);
}
