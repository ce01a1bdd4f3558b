/**
 * What a feedback store keeps of a scope, named once for both stores: per address its standing,
 * its events and its verifications; per domain its tally; for the scope its catch-all tally. Each
 * record lasts the retention since its last write, and history reads only entries younger than it.
 * The Redis store names its keys `<prefix>:fb:{<scope>}:<recordName>` (one slot per scope); the
 * memory store keeps one map per kind.
 */
import type { AddressState, Tally } from './state.ts';
import { MAX_EVENTS_PER_ADDRESS, MAX_VERIFICATIONS_PER_ADDRESS, newestFirst, type StoredEvent, type StoredVerification } from './store.ts';

/** The records of a scope kept per address hash or per domain hash, and what each holds. */
export interface ScopeRecords {
  address: AddressState;
  /** Newest first, at most `KEPT.events`. */
  events: StoredEvent[];
  /** Newest first, at most `KEPT.verifications`. */
  verifications: StoredVerification[];
  domain: Tally & { catchAll: boolean };
}
export type RecordKind = keyof ScopeRecords;

/** Entries kept per address in the list records. */
export const KEPT = { events: MAX_EVENTS_PER_ADDRESS, verifications: MAX_VERIFICATIONS_PER_ADDRESS } as const;

const TAG: Record<RecordKind | 'overall', string> = { address: 'a', events: 'e', verifications: 'v', domain: 'd', overall: 'k' };

/** A record's name within its scope: `a:<hash>`, `e:<hash>`, `v:<hash>`, `d:<domain>`, or `k` for the scope's catch-all tally. */
export function recordName(kind: RecordKind, id: string): string;
export function recordName(kind: 'overall'): string;
export function recordName(kind: RecordKind | 'overall', id?: string): string {
  return id === undefined ? TAG[kind] : `${TAG[kind]}:${id}`;
}

/** The fields of an address record in Redis, in the order `AddressState` is read from them. */
export const ADDRESS_FIELDS = ['b', 's', 'd', 'c', 'lb', 'ld', 'lc', 'le'] as const;

/** History's entries: younger than the retention, newest first. */
export const recentFirst = <T extends { at: number }>(entries: readonly T[] | undefined, now: number, retentionMs: number): T[] =>
  newestFirst((entries ?? []).filter((entry) => entry.at > now - retentionMs));
