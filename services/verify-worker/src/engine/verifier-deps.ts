/** What the verifier is built from (handler.ts assembles it): lookups, the prober, caches, health. */
import type { VerifyResult } from '@svc/contracts';
import type { Feedback } from '@svc/feedback';
import type { CachedOutcome } from '../cache/cached-outcome.ts';
import type { MailHostsLookup } from '../dns/resolver.ts';
import type { ControlEvidence } from './control-evidence.ts';
import type { MailServerProbeDeps } from './mail-server-probe.ts';

export interface VerifierDeps {
  lookupMailHosts: (domain: string) => Promise<MailHostsLookup>;
  probe: MailServerProbeDeps;
  batchDeadlineMs: number;
  /** Seed of the controls' local parts (the envelope sender): stable across the workers of a deployment. */
  controlSeed: string;
  /**
   * Settled outcomes, keyed by a hash of the normalised address, holding no address (never
   * timeouts or temporary states). `ttlSeconds`: a shorter life than the cache's own, for
   * outcomes drawn from a negative DNS answer (its zone's negative TTL).
   */
  cache?: {
    get(key: string): Promise<CachedOutcome | undefined>;
    set(key: string, value: CachedOutcome, ttlSeconds?: number): Promise<void>;
  };
  /** What each domain's controls showed, kept with its facts (control-evidence.ts); absent: asked in every batch. */
  evidence?: {
    get(domain: string): Promise<ControlEvidence | undefined>;
    set(domain: string, value: ControlEvidence): Promise<void>;
  };
  /** Seconds the DNS answers behind a domain's verdict are still kept (0: not kept); default: as long as the cache keeps anything. */
  dnsKeepSeconds?: (domain: string) => number;
  /** Whether the verifier can see: resolver and egress health (health/). Absent: it always can. */
  health?: VerifierHealth;
  onResult?: (result: VerifyResult) => void;
  /** Learning from sends: what the calling key reported (feedback-effects.ts). Absent: none. */
  feedback?: Feedback;
}

/** The verifier's view of its own blind spots. */
export interface VerifierHealth {
  /** The resolver's trust from a canary check begun at or after `since` (one shared by concurrent askers). */
  resolverTrustedSince(since: number): Promise<boolean>;
  /** The resolver's trust now (the latest check, waiting for the first). */
  resolverTrusted(): Promise<boolean>;
  /** Whether port 25 can be reached (the latest egress check, waiting for the first). */
  egressOpen(): Promise<boolean>;
  /** Whether port 25 can be reached, from an egress check begun at or after `since` (shared by concurrent askers). */
  egressOpenSince(since: number): Promise<boolean>;
  /** The latest verdicts without waiting, for a batch whose deadline came first: unknown trust is no trust, an unknown egress is open. */
  latest(): { resolverTrusted: boolean; egressOpen: boolean };
}
