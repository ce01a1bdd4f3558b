/**
 * Provider-wide back-off per egress (decisions, "Politeness at volume"): after a throttle reply
 * (checks/throttle-replies.ts), no new session goes to any MX host of that provider through
 * that egress until the back-off ends; then one session (the probe) tries again, and the others
 * keep waiting until it ended. The delay is the one the reply asked for, else the base (60 s),
 * doubling with each consecutive throttle up to 15 minutes; a session that began after the
 * throttle and ended without one resets it.
 *
 * `MemoryBackoffStore` holds the state in this process (embedded mode); `RedisBackoffStore` in
 * Redis for every worker of the deployment, one hash per provider and egress
 * (`<prefix>:throttle:{<provider>}:<egress>`, hash-tagged per provider so that a provider's
 * egresses live on one Cluster slot), kept 15 minutes past the back-off so that a worker that
 * restarts still knows it and a throttle soon after the probe still doubles.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from '@svc/jobs/redis';

/** A script of the lua/ folder beside this module, read once at load (the build copies the folder beside the compiled files). */
const lua = (name: string): string => readFileSync(new URL(`./lua/${name}`, import.meta.url), 'utf8');

export const MAX_BACKOFF_MS = 15 * 60_000;
/** How long the one probe session may take before another may try instead (its worker may have died). */
export const PROBE_LEASE_MS = 60_000;

export interface BackoffState {
  /** When the back-off ends. */
  until: number;
  /** The back-off's length (the next consecutive throttle doubles it). */
  delayMs: number;
  /** When the throttle was received. */
  at: number;
}

export type Admission =
  /** `probe`: the first session after a back-off, the one that tries again. */
  | { admitted: true; probe: boolean }
  /** Wait until `until` (the back-off's end, or the probe's lease). */
  | { admitted: false; until: number };

export interface BackoffStore {
  /** May a new session to this provider go out through this egress now? */
  admit(provider: string, egress: string, now: number): Promise<Admission>;
  /** A throttle reply was received at `now`: the back-off starts or doubles. */
  throttle(provider: string, egress: string, now: number, askedMs: number | undefined): Promise<BackoffState>;
  /** A session begun at `startedAt` ended without a throttle: a back-off older than it is over. */
  clear(provider: string, egress: string, startedAt: number): Promise<void>;
  /** The current back-off, if any (metrics, tests). */
  peek(provider: string, egress: string): Promise<BackoffState | undefined>;
}

export interface BackoffPolicy {
  baseMs: number;
  maxMs?: number;
}

/** The next back-off: the delay asked for, else the base, else double the previous one (consecutive throttles). */
export function nextDelay(previous: BackoffState | undefined, askedMs: number | undefined, policy: BackoffPolicy): number {
  const max = policy.maxMs ?? MAX_BACKOFF_MS;
  const doubled = previous === undefined ? policy.baseMs : previous.delayMs * 2;
  return Math.min(max, Math.max(askedMs ?? 0, doubled));
}

interface Entry extends BackoffState {
  probeUntil: number;
}

export class MemoryBackoffStore implements BackoffStore {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly policy: BackoffPolicy) {}

  private key = (provider: string, egress: string) => `${provider}\u0000${egress}`;

  private live(provider: string, egress: string, now: number): Entry | undefined {
    const key = this.key(provider, egress);
    const entry = this.entries.get(key);
    if (entry !== undefined && now > entry.until + MAX_BACKOFF_MS) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  admit(provider: string, egress: string, now: number): Promise<Admission> {
    const entry = this.live(provider, egress, now);
    if (entry === undefined) return Promise.resolve({ admitted: true, probe: false });
    if (now < entry.until) return Promise.resolve({ admitted: false, until: entry.until });
    if (now < entry.probeUntil) return Promise.resolve({ admitted: false, until: entry.probeUntil });
    entry.probeUntil = now + PROBE_LEASE_MS;
    return Promise.resolve({ admitted: true, probe: true });
  }

  throttle(provider: string, egress: string, now: number, askedMs: number | undefined): Promise<BackoffState> {
    const previous = this.live(provider, egress, now);
    // Several sessions cut by one throttle count once: the running back-off stands.
    if (previous !== undefined && now < previous.until) return Promise.resolve({ ...previous });
    const delayMs = nextDelay(previous, askedMs, this.policy);
    const entry: Entry = { until: now + delayMs, delayMs, at: now, probeUntil: 0 };
    this.entries.set(this.key(provider, egress), entry);
    return Promise.resolve({ until: entry.until, delayMs, at: now });
  }

  clear(provider: string, egress: string, startedAt: number): Promise<void> {
    const key = this.key(provider, egress);
    const entry = this.entries.get(key);
    if (entry !== undefined && entry.at <= startedAt) this.entries.delete(key);
    return Promise.resolve();
  }

  peek(provider: string, egress: string): Promise<BackoffState | undefined> {
    const entry = this.entries.get(this.key(provider, egress));
    return Promise.resolve(entry === undefined ? undefined : { until: entry.until, delayMs: entry.delayMs, at: entry.at });
  }
}

// KEYS[1] the hash; ARGV now, probe lease. Returns {1, probe} or {0, until}.
const ADMIT = lua('throttle-admit.lua');

// KEYS[1]; ARGV now, asked (0: none), base, max, keep. Returns {until, delay, at}.
const THROTTLE = lua('throttle-start.lua');

// KEYS[1]; ARGV startedAt. Deletes a back-off received before the session began.
const CLEAR = lua('throttle-clear.lua');

type BackoffRedis = Redis & {
  throttleAdmit(key: string, now: number, lease: number): Promise<[number, number]>;
  throttleStart(key: string, now: number, asked: number, base: number, max: number, keep: number): Promise<[number, number, number]>;
  throttleClear(key: string, startedAt: number): Promise<number>;
};

export class RedisBackoffStore implements BackoffStore {
  private readonly redis: BackoffRedis;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly policy: BackoffPolicy,
  ) {
    if (!('throttleAdmit' in redis)) {
      redis.defineCommand('throttleAdmit', { numberOfKeys: 1, lua: ADMIT });
      redis.defineCommand('throttleStart', { numberOfKeys: 1, lua: THROTTLE });
      redis.defineCommand('throttleClear', { numberOfKeys: 1, lua: CLEAR });
    }
    this.redis = redis as BackoffRedis;
  }

  /** One hash per provider and egress, hash-tagged by provider. */
  key = (provider: string, egress: string): string => `${this.prefix}:throttle:{${provider}}:${egress}`;

  async admit(provider: string, egress: string, now: number): Promise<Admission> {
    const [admitted, value] = await this.redis.throttleAdmit(this.key(provider, egress), now, PROBE_LEASE_MS);
    return admitted === 1 ? { admitted: true, probe: value === 1 } : { admitted: false, until: value };
  }

  async throttle(provider: string, egress: string, now: number, askedMs: number | undefined): Promise<BackoffState> {
    const max = this.policy.maxMs ?? MAX_BACKOFF_MS;
    const [until, delayMs, at] = await this.redis.throttleStart(
      this.key(provider, egress),
      now,
      askedMs ?? 0,
      this.policy.baseMs,
      max,
      MAX_BACKOFF_MS,
    );
    return { until, delayMs, at };
  }

  async clear(provider: string, egress: string, startedAt: number): Promise<void> {
    await this.redis.throttleClear(this.key(provider, egress), startedAt);
  }

  async peek(provider: string, egress: string): Promise<BackoffState | undefined> {
    const [until, delay, at] = await this.redis.hmget(this.key(provider, egress), 'until', 'delay', 'at');
    if (until === null || delay === null || at === null) return undefined;
    return { until: Number(until), delayMs: Number(delay), at: Number(at) };
  }
}
