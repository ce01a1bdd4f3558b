/**
 * The job's view of the encoder (./encoder): level M, the smallest version that holds the data
 * under optimal mixed segmentation (numeric, alphanumeric and UTF-8 bytes), so digits-only content
 * fits 513 characters at version 10 while bytes fit 213. Content that needs a version above 10 is
 * `content_too_long`.
 */
import { encodeText } from './encoder/index.ts';

export { MAX_VERSION } from './encoder/index.ts';

export interface ModuleMatrix {
  version: number;
  size: number;
  /** Row-major, `size * size` entries, 1 = dark. */
  modules: Uint8Array;
}

export type EncodeOutcome = { ok: true; matrix: ModuleMatrix } | { ok: false; reason: 'content_too_long' };

export function encode(data: string): EncodeOutcome {
  const symbol = encodeText(data);
  if (symbol === undefined) return { ok: false, reason: 'content_too_long' };
  return { ok: true, matrix: { version: symbol.version, size: symbol.size, modules: symbol.modules } };
}
