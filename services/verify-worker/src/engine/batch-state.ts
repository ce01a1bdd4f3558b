/**
 * One batch as it passes through the verifier's phases (verifier.ts): each phase reads what the
 * phases before it wrote here, so that a phase can be read, and tested, alone.
 */
import type { BeforeSession, VerifyOutcome } from '@svc/contracts';
import type { ParsedAddress } from '../checks/index.ts';
import type { CachedOutcome } from '../cache/cached-outcome.ts';
import type { MailHostsLookup } from '../dns/resolver.ts';
import type { ControlEvidence } from './control-evidence.ts';
import type { Recalled } from './feedback-effects.ts';
import type { ProbeOutcome } from './mail-server-probe.ts';

export interface BatchCall {
  signal: AbortSignal;
  /** When the answer is due, less the time to assemble it. */
  deadlineAt: number;
  beforeSession?: BeforeSession | undefined;
  keyId?: string | undefined;
  onSettled?: ((settled: number, total: number) => void) | undefined;
  /** No parked connection taken (a list's retry round). */
  freshConnection?: boolean | undefined;
}

/** Whether the verifier could see while it verified this batch (health/). */
export interface Sight {
  resolverTrusted: boolean;
  canProbe: boolean;
}

/** A map that says when it grows: the verifier's settled outcomes, for progress. */
export class SettlingMap<K, V> extends Map<K, V> {
  constructor(private readonly grew: (size: number) => void) {
    super();
  }

  override set(key: K, value: V): this {
    const added = !this.has(key);
    super.set(key, value);
    if (added) this.grew(this.size);
    return this;
  }
}

export class BatchState {
  /** Distinct entries once parsed: settled plus to probe (0 until then, when progress is not reported). */
  total = 0;
  /** Answered entries by dedup key. */
  readonly settled: SettlingMap<string, VerifyOutcome>;
  /** Parsed addresses still to answer, by dedup key. */
  readonly toProbe = new Map<string, ParsedAddress>();
  /** What the calling key reported of these addresses (feedback-effects.ts). */
  recalled: Recalled = new Map();
  /** The domains of `toProbe`, each once. */
  domains: string[] = [];
  readonly lookups = new Map<string, MailHostsLookup>();
  lookedUpAt = 0;
  /** Typo suggestions per domain. */
  suggestions = new Map<string, string | undefined>();
  /** Port 25's state, asked while the DNS answers come. */
  egressOpen: Promise<boolean> = Promise.resolve(true);
  sight: Sight = { resolverTrusted: true, canProbe: true };
  /** Each probed domain's control address (random local part). */
  readonly controls = new Map<string, string>();
  /** Control evidence from earlier batches, by domain. */
  known = new Map<string, ControlEvidence>();
  /** What the mail servers said, by recipient (addresses and controls). */
  outcomes = new Map<string, ProbeOutcome>();
  /** Outcomes to cache, written side by side once every address is decided. */
  readonly cacheWrites: Array<{ key: string; value: CachedOutcome; seconds: number | undefined }> = [];

  constructor(readonly call: BatchCall) {
    // Reports each newly settled address once the total is known (after the parse phase).
    this.settled = new SettlingMap<string, VerifyOutcome>((size) => {
      if (this.total > 0) call.onSettled?.(size, this.total);
    });
  }
}

/** Resolves (undefined) when `signal` aborts: raced against what a batch waits for. */
export function aborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
}
