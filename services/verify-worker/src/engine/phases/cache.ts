/**
 * Phase 2, cache: what is already known settles an address without a probe: a bounce the calling
 * key reported (feedback-effects.ts), then an outcome cached by an earlier batch. A cache that
 * cannot be read is a miss, never a failed entry.
 */
import { fromCachedOutcome, outcomeCacheKey } from '../../cache/cached-outcome.ts';
import type { BatchState } from '../batch-state.ts';
import { recallFeedback } from '../feedback-effects.ts';
import type { VerifierDeps } from '../verifier-deps.ts';

export async function cachePhase(batch: BatchState, deps: Pick<VerifierDeps, 'cache' | 'feedback'>): Promise<void> {
  const { toProbe, settled } = batch;
  batch.recalled = await recallFeedback(deps.feedback, batch.call.keyId, toProbe, settled);
  const cache = deps.cache;
  if (cache === undefined) return;
  await Promise.all(
    [...toProbe].map(async ([key, parsed]) => {
      const cached = await cache.get(outcomeCacheKey(parsed.address)).catch(() => undefined);
      if (cached === undefined) return;
      settled.set(key, { result: fromCachedOutcome(cached, parsed.address, parsed.local), temporary: false });
      toProbe.delete(key);
    }),
  );
}
