/**
 * What the outcome cache keeps at rest, and under which key: no address anywhere. The key is a
 * SHA-256 of the normalised address; the value is the result without `email`, and a typo
 * suggestion only as its domain, rebuilt with the entry's own local part on read.
 */
import { createHash } from 'node:crypto';
import { verifyResultSchema, type VerifyResult } from '@svc/contracts';
import type { z } from 'zod';

export const cachedOutcomeSchema = verifyResultSchema
  .omit({ email: true, didYouMean: true })
  .extend({ suggestedDomain: verifyResultSchema.shape.didYouMean })
  .strict();
export type CachedOutcome = z.infer<typeof cachedOutcomeSchema>;

/** `address` is the normalised form (trimmed, domain as lower-case A-labels). */
export function outcomeCacheKey(address: string): string {
  return createHash('sha256').update(address, 'utf8').digest('hex');
}

export function toCachedOutcome(result: VerifyResult): CachedOutcome {
  const { email: _email, didYouMean, ...rest } = result;
  const suggestedDomain = didYouMean?.slice(didYouMean.lastIndexOf('@') + 1);
  return suggestedDomain === undefined ? rest : { ...rest, suggestedDomain };
}

export function fromCachedOutcome(cached: CachedOutcome, email: string, local: string): VerifyResult {
  const { suggestedDomain, ...rest } = cached;
  return { email, ...rest, ...(suggestedDomain === undefined ? {} : { didYouMean: `${local}@${suggestedDomain}` }) };
}
