/**
 * Where feedback and verification history are kept, per scope (a key's id, or `*` for the
 * deployment), under keyed hashes only (address-hash.ts): the store never sees an address.
 */
import type { FeedbackSource, Outcome } from './events.ts';
import type { AddressState, Tally } from './state.ts';

export interface EventRecord {
  /** The address's keyed hash. */
  hash: string;
  /** Its domain's keyed hash. */
  domain: string;
  outcome: Outcome;
  at: number;
  source: FeedbackSource;
}

export interface VerificationRecord {
  hash: string;
  at: number;
  verdict: string;
  reason: string;
  score: number;
}

export interface StoredEvent {
  at: number;
  outcome: Outcome;
  source: FeedbackSource;
}

export interface StoredVerification {
  at: number;
  verdict: string;
  reason: string;
  score: number;
}

/** What the store knows of some addresses and their domains, for a verification. */
export interface Recall {
  addresses: Map<string, AddressState>;
  domains: Map<string, Tally>;
  /** Deliveries and bounces at every domain of the scope known to be catch-all. */
  overall: Tally;
}

export interface FeedbackStore {
  record(scope: string, events: readonly EventRecord[], now: number): Promise<void>;
  recall(scope: string, hashes: readonly string[], domains: readonly string[], now: number): Promise<Recall>;
  /** Domains found to accept any address: their tallies join the scope's catch-all rate (once each). */
  markCatchAll(scope: string, domains: readonly string[], now: number): Promise<void>;
  recordVerifications(scope: string, entries: readonly VerificationRecord[], now: number): Promise<void>;
  /** The address's kept verifications and events, newest first, none older than the retention. */
  history(scope: string, hash: string, now: number): Promise<{ verifications: StoredVerification[]; events: StoredEvent[] }>;
  /** Everything of a scope (a deleted key). */
  deleteScope(scope: string): Promise<void>;
}

/** Events kept per address (the oldest go first); verifications kept per address (the contract's 20). */
export const MAX_EVENTS_PER_ADDRESS = 100;
export const MAX_VERIFICATIONS_PER_ADDRESS = 20;

export const newestFirst = <T extends { at: number }>(entries: T[]): T[] => entries.sort((a, b) => b.at - a.at);
