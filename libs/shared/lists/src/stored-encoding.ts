/**
 * How the Redis list store packs what it keeps per row (issue 28: at most about 100 bytes of Redis
 * a stored row, duplicates included; issue 32: a list of 2,000 addresses took 400 bytes a row).
 * - Input and work chunks are their JSON deflated (zlib, whose first byte is never the `[` of a
 *   plain JSON chunk of an earlier release, still read as it is): 1,000 rows of one address
 *   repeated take a few hundred bytes, distinct addresses a fraction of their text.
 * - A result is its settle sequence and a shape: the compact result (contracts compact-result.ts,
 *   without the address, which is read from the input row) kept once per list and numbered. Most
 *   results of a list share a shape (one per domain and verdict), so a settled address costs
 *   one small hash field, `<seq>:<shape>`, instead of its JSON (about 350 bytes).
 * zlib is Node's own (no library needed for deflate).
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { decodeCompactResult, encodeCompactResult, verifyResultSchema, type VerifyResult } from '@svc/contracts';

/** A chunk of rows as stored: deflated JSON. */
export function packChunk(rows: unknown): Buffer {
  return deflateSync(JSON.stringify(rows), { level: 6 });
}

/** A chunk as stored, deflated or (written by an earlier release) plain JSON. */
export function unpackChunk(stored: Buffer): unknown {
  return JSON.parse((stored[0] === 0x5b ? stored : inflateSync(stored)).toString('utf8'));
}

/** A result's shape: the compact result without its address (`didYouMean` kept whole, it is per address anyway). */
export function shapeOf(result: VerifyResult): string {
  const { email: _email, didYouMean, ...rest } = result;
  return encodeCompactResult(didYouMean === undefined ? rest : { ...rest, extra: didYouMean });
}

/** A shape back as a result for `email`; undefined when what is stored is not one. */
export function resultOfShape(shape: string, email: string): VerifyResult | undefined {
  const decoded = decodeCompactResult(shape);
  if (decoded === undefined) return undefined;
  const parsed = verifyResultSchema.safeParse({
    email,
    ...decoded.fields,
    ...(decoded.extra === undefined ? {} : { didYouMean: decoded.extra }),
  });
  return parsed.success ? parsed.data : undefined;
}

/** A result field: `<seq>:<shape number>`, or (an earlier release) `[seq, result JSON]`. */
export type StoredField = { seq: number; shape: number } | { seq: number; result: unknown };

export function parseResultField(value: string): StoredField | undefined {
  const packed = /^(\d+):(\d+)$/.exec(value);
  if (packed !== null) return { seq: Number(packed[1]), shape: Number(packed[2]) };
  try {
    const parsed: unknown = JSON.parse(value);
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'number') return { seq: parsed[0], result: parsed[1] };
  } catch {
    return undefined;
  }
  return undefined;
}
