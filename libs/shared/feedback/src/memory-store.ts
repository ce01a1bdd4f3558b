/** Embedded mode's feedback store: the same rules as Redis's, in this process's memory. */
import { EMPTY_STATE, EMPTY_TALLY, applyEvent, moveTally, standingOf, type AddressState, type Tally } from './state.ts';
import { KEPT, recentFirst, type RecordKind, type ScopeRecords } from './records.ts';
import type { EventRecord, FeedbackStore, Recall, StoredEvent, StoredVerification, VerificationRecord } from './store.ts';

interface Kept<T> {
  value: T;
  /** Epoch ms after which the entry is gone (retention since its last write). */
  expiresAt: number;
}

/** A scope's records (records.ts), one map per kind, and its catch-all tally. */
type ScopeData = { [K in RecordKind]: Map<string, Kept<ScopeRecords[K]>> } & { overall: Tally };

export class MemoryFeedbackStore implements FeedbackStore {
  private readonly scopes = new Map<string, ScopeData>();

  constructor(private readonly retentionMs: number) {}

  private scope(name: string): ScopeData {
    let data = this.scopes.get(name);
    if (data === undefined) {
      data = { address: new Map(), events: new Map(), verifications: new Map(), domain: new Map(), overall: { ...EMPTY_TALLY } };
      this.scopes.set(name, data);
    }
    return data;
  }

  private read<T>(map: Map<string, Kept<T>>, key: string, now: number): T | undefined {
    const kept = map.get(key);
    if (kept === undefined) return undefined;
    if (kept.expiresAt <= now) {
      map.delete(key);
      return undefined;
    }
    return kept.value;
  }

  record(scope: string, events: readonly EventRecord[], now: number): Promise<void> {
    const data = this.scope(scope);
    const expiresAt = now + this.retentionMs;
    for (const event of events) {
      const before = this.read(data.address, event.hash, now) ?? EMPTY_STATE;
      const after = applyEvent(before, event.outcome, event.at);
      data.address.set(event.hash, { value: after, expiresAt });
      const domain = this.read(data.domain, event.domain, now) ?? { ...EMPTY_TALLY, catchAll: false };
      const from = standingOf(before);
      const to = standingOf(after);
      data.domain.set(event.domain, { value: { ...moveTally(domain, from, to), catchAll: domain.catchAll }, expiresAt });
      if (domain.catchAll) data.overall = moveTally(data.overall, from, to);
      const kept = this.read(data.events, event.hash, now) ?? [];
      kept.unshift({ at: event.at, outcome: event.outcome, source: event.source });
      data.events.set(event.hash, { value: kept.slice(0, KEPT.events), expiresAt });
    }
    return Promise.resolve();
  }

  recall(scope: string, hashes: readonly string[], domains: readonly string[], now: number): Promise<Recall> {
    const data = this.scope(scope);
    const addresses = new Map<string, AddressState>();
    for (const hash of hashes) {
      const state = this.read(data.address, hash, now);
      if (state !== undefined) addresses.set(hash, state);
    }
    const tallies = new Map<string, Tally>();
    for (const domain of domains) {
      const tally = this.read(data.domain, domain, now);
      if (tally !== undefined) tallies.set(domain, { delivered: tally.delivered, bounced: tally.bounced });
    }
    return Promise.resolve({ addresses, domains: tallies, overall: { ...data.overall } });
  }

  markCatchAll(scope: string, domains: readonly string[], now: number): Promise<void> {
    const data = this.scope(scope);
    for (const domain of domains) {
      const tally = this.read(data.domain, domain, now) ?? { ...EMPTY_TALLY, catchAll: false };
      if (tally.catchAll) continue;
      data.overall = { delivered: data.overall.delivered + tally.delivered, bounced: data.overall.bounced + tally.bounced };
      data.domain.set(domain, { value: { ...tally, catchAll: true }, expiresAt: now + this.retentionMs });
    }
    return Promise.resolve();
  }

  recordVerifications(scope: string, entries: readonly VerificationRecord[], now: number): Promise<void> {
    const data = this.scope(scope);
    for (const { hash, ...entry } of entries) {
      const kept = this.read(data.verifications, hash, now) ?? [];
      kept.unshift(entry);
      data.verifications.set(hash, { value: kept.slice(0, KEPT.verifications), expiresAt: now + this.retentionMs });
    }
    return Promise.resolve();
  }

  history(scope: string, hash: string, now: number): Promise<{ verifications: StoredVerification[]; events: StoredEvent[] }> {
    const data = this.scope(scope);
    return Promise.resolve({
      verifications: recentFirst(this.read(data.verifications, hash, now), now, this.retentionMs),
      events: recentFirst(this.read(data.events, hash, now), now, this.retentionMs),
    });
  }

  deleteScope(scope: string): Promise<void> {
    this.scopes.delete(scope);
    return Promise.resolve();
  }
}
