/**
 * The rules of a list that need no schema: its limits, the size of its billing unit and the dedup
 * key. Kept apart from lists.ts (zod) so that what bundles them for a browser, the web console's
 * preview and price, does not bundle zod and every schema with them (@svc/contracts/rules).
 */

/** Addresses in one batch call; a list's billing unit is one batch's worth. */
export const MAX_BATCH = 100;
export const MAX_LIST_ADDRESSES = 100_000;
export const LIST_BODY_LIMIT_BYTES = 16 * 1024 * 1024;
/** Addresses per billing unit: the batch price buys a started hundred processed distinct addresses. */
export const LIST_UNIT_SIZE = MAX_BATCH;

/**
 * The key under which duplicates are counted and probed once, in batches, lists, the console's
 * preview and `verify-list`: the whole address trimmed and in lower case. RFC 5321 leaves a local
 * part's case to the receiving server, but mail providers treat it case-insensitively in practice,
 * and a person counts `USER@X.TEST` and `user@x.test` as one contact (decisions "Batch verify").
 * The gateway counts a list's duplicates, the verifier probes once and the console prices the
 * distinct addresses by this one rule.
 */
export function dedupKey(input: string): string {
  return input.trim().toLowerCase();
}
