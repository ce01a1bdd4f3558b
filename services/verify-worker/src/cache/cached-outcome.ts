/**
 * What the outcome cache keeps at rest, and under which key: no address anywhere. The key is a
 * SHA-256 of the normalised address; the value is the result without `email`, and a typo
 * suggestion only as its domain, rebuilt with the entry's own local part on read.
 */
import { createHash } from 'node:crypto';
import { decodeCompactResult, encodeCompactResult, verifyResultSchema, type VerifyResult } from '@svc/contracts';
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

/** An outcome as Redis keeps it (compact-result.ts): about 60 bytes where its JSON took about 300. */
export function encodeCachedOutcome(cached: CachedOutcome): string {
  const { suggestedDomain, ...rest } = cached;
  return encodeCompactResult(suggestedDomain === undefined ? rest : { ...rest, extra: suggestedDomain });
}

/** What encodeCachedOutcome wrote, checked against the schema; undefined when it is not one (a miss). */
export function decodeCachedOutcome(raw: string): CachedOutcome | undefined {
  const decoded = decodeCompactResult(raw);
  if (decoded === undefined) return undefined;
  const parsed = cachedOutcomeSchema.safeParse(
    decoded.extra === undefined ? decoded.fields : { ...decoded.fields, suggestedDomain: decoded.extra },
  );
  return parsed.success ? parsed.data : undefined;
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
