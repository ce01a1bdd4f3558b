/**
 * Learning from sends, as the gateway and the verifier use it: reports go in under keyed hashes,
 * verifications ask what is known of their addresses, history comes out. Which answers a report
 * changes is the scope: the reporting key's own (FEEDBACK_SCOPE=key) or every key's
 * (`deployment`).
 */
import { addressHasher, domainKey, type AddressHasher } from './address-hash.ts';
import { domainOf, normaliseAddress, type FeedbackEvent, type FeedbackResponse, type Outcome, type FeedbackSource } from './events.ts';
import { effectOf, historyCheck, type Effect, type FeedbackSettings, type HistoryCheck } from './effects.ts';
import { catchAllProbability, roundProbability } from './probability.ts';
import { EMPTY_TALLY } from './state.ts';
import type { EventRecord, FeedbackStore } from './store.ts';

export type FeedbackScope = 'key' | 'deployment';

export interface FeedbackOptions {
  store: FeedbackStore;
  /** HISTORY_HASH_SECRET, or the one kept in the backend (asked once). */
  secret: () => Promise<string>;
  settings: FeedbackSettings;
  scope: FeedbackScope;
  now?: () => number;
}

/** What a verification learns of one address. */
export interface Recollection {
  effect: Effect;
  history: HistoryCheck | null;
  /** The chance an address at this domain receives mail were it a catch-all (two decimals). */
  probability: number;
}

export interface VerifiedAddress {
  /** The address as the verifier read it (normalised again here). */
  address: string;
  verdict: string;
  reason: string;
  score: number;
  catchAll: boolean | null;
}

export interface HistoryBody {
  email: string;
  verifications: Array<{ at: string; verdict: string; reason: string; score: number }>;
  events: Array<{ at: string; outcome: Outcome; source: FeedbackSource }>;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export class Feedback {
  private hasher: Promise<AddressHasher> | undefined;
  readonly now: () => number;

  constructor(private readonly options: FeedbackOptions) {
    this.now = options.now ?? Date.now;
  }

  get settings(): FeedbackSettings {
    return this.options.settings;
  }

  /** The store's scope of a key's reports and verifications. */
  scopeOf(keyId: string): string {
    return this.options.scope === 'deployment' ? '*' : keyId;
  }

  private hash(): Promise<AddressHasher> {
    this.hasher ??= this.options.secret().then(addressHasher);
    // A secret that could not be read is asked again next time.
    this.hasher.catch(() => (this.hasher = undefined));
    return this.hasher;
  }

  async report(keyId: string, events: readonly FeedbackEvent[], skipped = 0): Promise<FeedbackResponse> {
    const hash = await this.hash();
    const records: EventRecord[] = [];
    for (const event of events) {
      const address = normaliseAddress(event.email);
      if (address === null) continue;
      records.push({
        hash: hash(address),
        domain: domainKey(hash, domainOf(address)),
        outcome: event.outcome,
        at: event.at,
        source: event.source,
      });
    }
    await this.options.store.record(this.scopeOf(keyId), records, this.now());
    return { accepted: records.length, ignored: events.length - records.length + skipped };
  }

  /** What is known of each address (by its normalised form; malformed ones are left out). */
  async recall(keyId: string, addresses: readonly string[]): Promise<Map<string, Recollection>> {
    const known = new Map<string, Recollection>();
    const normalised = [...new Set(addresses.map((address) => normaliseAddress(address)).filter((address) => address !== null))];
    if (normalised.length === 0) return known;
    const hash = await this.hash();
    const hashes = normalised.map((address) => hash(address));
    const domainNames = [...new Set(normalised.map(domainOf))];
    const domainKeys = new Map(domainNames.map((domain) => [domain, domainKey(hash, domain)]));
    const now = this.now();
    const recall = await this.options.store.recall(this.scopeOf(keyId), hashes, [...domainKeys.values()], now);
    normalised.forEach((address, index) => {
      const state = recall.addresses.get(hashes[index]!);
      const tally = recall.domains.get(domainKeys.get(domainOf(address))!) ?? EMPTY_TALLY;
      known.set(address, {
        effect: effectOf(state, now, this.options.settings),
        history: historyCheck(state),
        probability: roundProbability(catchAllProbability(tally, recall.overall)),
      });
    });
    return known;
  }

  /** A verification's results into the key's history, and the catch-all domains it found. */
  async remember(keyId: string, verified: readonly VerifiedAddress[]): Promise<void> {
    if (verified.length === 0) return;
    const hash = await this.hash();
    const now = this.now();
    const scope = this.scopeOf(keyId);
    const entries = [];
    const catchAll = new Set<string>();
    for (const result of verified) {
      const address = normaliseAddress(result.address);
      if (address === null) continue;
      entries.push({ hash: hash(address), at: now, verdict: result.verdict, reason: result.reason, score: result.score });
      if (result.catchAll === true) catchAll.add(domainKey(hash, domainOf(address)));
    }
    await Promise.all([
      this.options.store.recordVerifications(scope, entries, now),
      this.options.store.markCatchAll(scope, [...catchAll], now),
    ]);
  }

  /** The key's history of an address, or null when the input is not an address. */
  async history(keyId: string, email: string): Promise<HistoryBody | null> {
    const address = normaliseAddress(email);
    if (address === null) return null;
    const hash = await this.hash();
    const kept = await this.options.store.history(this.scopeOf(keyId), hash(address), this.now());
    return {
      email,
      verifications: kept.verifications.map(({ at, ...rest }) => ({ at: iso(at), ...rest })),
      events: kept.events.map(({ at, outcome, source }) => ({ at: iso(at), outcome, source })),
    };
  }

  deleteKey(keyId: string): Promise<void> {
    return this.options.store.deleteScope(keyId);
  }
}
