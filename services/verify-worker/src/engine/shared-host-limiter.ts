/**
 * Session slots per mail server shared by the batch route and lists, with batches first:
 * - a batch takes a slot whenever fewer than `perHost` sessions to that server are open;
 * - a list takes one only while fewer than `perHost - 1` list sessions are open to it (at least
 *   one), and never while a batch waits for that server.
 * So a list can slow a batch by at most the one session it may hold when `perHost` is 1, and
 * not at all otherwise.
 *
 * `LocalPriorityLimiter` counts in this process (embedded mode). `RedisHostLimiter` counts
 * across every worker of the deployment: each open session is a lease in a sorted set per server
 * (`<p>:smtp-slots:<address>`, member = token, score = expiry), renewed while the session runs,
 * so a crashed worker's slots free themselves when their lease lapses. Batches waiting for a
 * server mark themselves in `<p>:smtp-waiting:<address>` (also with an expiry). Both keys carry
 * the server's address as hash tag (`{<address>}`), so the acquire script is single-slot on a
 * Redis Cluster and servers spread over its primaries.
 *
 * If Redis cannot be reached, a session waits for it (until its own deadline) rather than count
 * in this process: every worker counting on its own would multiply the per-server limit by the
 * number of workers, which is exactly the impoliteness the limit exists to prevent. The
 * condition is reported (`onUnavailable`: metric, log) and `available` turns false (readiness).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from '@svc/jobs/redis';
import { Slot, runInSlot, type HeldSlot, type SessionLimiter } from './host-limiter.ts';

/** A script of the lua/ folder beside this module, read once at load (the build copies the folder beside the compiled files). */
const lua = (name: string): string => readFileSync(new URL(`./lua/${name}`, import.meta.url), 'utf8');

export type SessionPriority = 'batch' | 'list';

export interface PrioritySessionLimiter {
  /** The view one kind of work uses; every view of one limiter shares its slots. */
  for(priority: SessionPriority): SessionLimiter;
  /**
   * Sessions of this process of `priority` refused a slot to `host` and still waiting for one:
   * what shows that a waiter has begun its wait (tests order waiters by it rather than by a pause).
   */
  waiting(host: string, priority: SessionPriority): number;
}

/** Sessions lists may hold to one server. */
export const listShare = (perHost: number): number => Math.max(1, perHost - 1);

interface Waiter {
  grant: () => void;
}

interface HostState {
  batch: number;
  list: number;
  waiting: Record<SessionPriority, Waiter[]>;
}

export class LocalPriorityLimiter implements PrioritySessionLimiter {
  private readonly hosts = new Map<string, HostState>();

  constructor(private readonly perHost: number) {}

  /** Slots given out, with their server and kind of work. */
  private readonly held = new WeakMap<HeldSlot, { slot: Slot; host: string; priority: SessionPriority }>();

  for(priority: SessionPriority): SessionLimiter {
    const view: SessionLimiter = {
      run: (host, signal, task) => runInSlot(view, host, signal, task),
      acquire: async (host, signal) => {
        await this.acquire(priority, host, signal);
        return this.slot(priority, host);
      },
      adopt: (slot) => Promise.resolve(this.adopt(priority, slot)),
      first: priority === 'batch',
    };
    return view;
  }

  run<T>(priority: SessionPriority, host: string, signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    return this.for(priority).run(host, signal, task);
  }

  waiting(host: string, priority: SessionPriority): number {
    return this.hosts.get(host)?.waiting[priority].length ?? 0;
  }

  private slot(priority: SessionPriority, host: string): HeldSlot {
    const slot = new Slot(() => this.release(priority, host));
    this.held.set(slot, { slot, host, priority });
    return slot;
  }

  /** A parked connection's slot, counted again as `priority`'s when that kind of work may start now. */
  private adopt(priority: SessionPriority, slot: HeldSlot): HeldSlot | undefined {
    const held = this.held.get(slot);
    if (held === undefined) return undefined;
    const state = this.state(held.host);
    state[held.priority] -= 1;
    const allowed = this.canStart(state, priority);
    if (!allowed || !held.slot.retire()) {
      state[held.priority] += 1;
      return undefined;
    }
    state[priority] += 1;
    return this.slot(priority, held.host);
  }

  private state(host: string): HostState {
    let state = this.hosts.get(host);
    if (state === undefined) {
      state = { batch: 0, list: 0, waiting: { batch: [], list: [] } };
      this.hosts.set(host, state);
    }
    return state;
  }

  private canStart(state: HostState, priority: SessionPriority): boolean {
    if (state.batch + state.list >= this.perHost) return false;
    return priority === 'batch' || (state.list < listShare(this.perHost) && state.waiting.batch.length === 0);
  }

  private acquire(priority: SessionPriority, host: string, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const state = this.state(host);
    if (this.canStart(state, priority) && state.waiting[priority].length === 0) {
      state[priority] += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const queue = state.waiting[priority];
      const waiter: Waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const index = queue.indexOf(waiter);
        if (index >= 0) queue.splice(index, 1);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        this.dispatch(host, state); // a batch that gave up may unblock lists
      };
      queue.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private release(priority: SessionPriority, host: string): void {
    const state = this.state(host);
    state[priority] -= 1;
    this.dispatch(host, state);
  }

  private dispatch(host: string, state: HostState): void {
    for (const priority of ['batch', 'list'] as const) {
      while (state.waiting[priority].length > 0 && this.canStart(state, priority)) {
        state[priority] += 1;
        state.waiting[priority].shift()!.grant();
      }
    }
    if (state.batch + state.list === 0 && state.waiting.batch.length === 0 && state.waiting.list.length === 0) this.hosts.delete(host);
  }
}

/** KEYS: slots, waiting batches. ARGV: now, token, slot ttl, per host, priority, list share, wait ttl. */
const ACQUIRE = lua('host-slot-acquire.lua');

/**
 * A parked connection's slot taken over by another kind of work. KEYS: slots, waiting batches.
 * ARGV: now, old token, new token, slot ttl, per host, priority, list share. The old lease is
 * counted out and the new one in only if the new kind of work could take a slot now; else the
 * old stays (and the caller ends its connection). 0 as well when the old lease has lapsed.
 */
const ADOPT = lua('host-slot-adopt.lua');

type LimiterRedis = Redis & {
  hostSlotAdopt(
    slots: string,
    waiting: string,
    now: number,
    oldToken: string,
    newToken: string,
    ttl: number,
    perHost: number,
    priority: SessionPriority,
    share: number,
  ): Promise<number>;
  hostSlotAcquire(
    slots: string,
    waiting: string,
    now: number,
    token: string,
    ttl: number,
    perHost: number,
    priority: SessionPriority,
    share: number,
    waitTtl: number,
  ): Promise<number>;
};

export interface RedisHostLimiterOptions {
  redis: Redis;
  prefix: string;
  perHost: number;
  /** Lease of one slot; renewed every third of it while the session runs. */
  slotTtlMs?: number;
  /** How often a waiter asks again. */
  pollMs?: Record<SessionPriority, number>;
  /** Each failed attempt to reach the shared counts (the session waits and tries again). */
  onUnavailable?: (error: unknown) => void;
  /** Pause between attempts while the shared counts are out of reach (default 250 ms). */
  unavailablePollMs?: number;
}

const RELEASE_RETRY_MS = 250;

/** A lease's token: its kind of work first (the acquire script counts list leases by it). */
const tokenFor = (priority: SessionPriority): string => `${priority === 'list' ? 'l' : 'b'}:${randomUUID()}`;

/** A failure this recent, with no success since, makes the limiter unavailable. */
const UNAVAILABLE_FOR_MS = 10_000;

export class RedisHostLimiter implements PrioritySessionLimiter {
  private readonly redis: LimiterRedis;
  private readonly slotTtlMs: number;
  private failedAt: number | undefined;
  private readonly pollMs: Record<SessionPriority, number>;

  constructor(private readonly options: RedisHostLimiterOptions) {
    if (!('hostSlotAcquire' in options.redis)) options.redis.defineCommand('hostSlotAcquire', { numberOfKeys: 2, lua: ACQUIRE });
    if (!('hostSlotAdopt' in options.redis)) options.redis.defineCommand('hostSlotAdopt', { numberOfKeys: 2, lua: ADOPT });
    this.redis = options.redis as LimiterRedis;
    this.slotTtlMs = options.slotTtlMs ?? 15_000;
    this.pollMs = options.pollMs ?? { batch: 20, list: 100 };
  }

  /** Waits for the slot releases in flight (shutdown, before the Redis connection is closed). */
  async close(): Promise<void> {
    await Promise.all([...this.releasing]);
  }

  /** False while the shared counts could not be reached lately (sessions wait meanwhile). */
  get available(): boolean {
    return this.failedAt === undefined || Date.now() - this.failedAt > UNAVAILABLE_FOR_MS;
  }

  /** Claims of this process refused at least once and still waiting, by priority and server. */
  private readonly waits = new Map<string, number>();
  /** Releases sent to Redis and not answered yet (`close` waits for them). */
  private readonly releasing = new Set<Promise<void>>();
  /** Slots given out, with their server, lease token and renewal timer. */
  private readonly held = new WeakMap<HeldSlot, { slot: Slot; host: string; token: string; renew: NodeJS.Timeout }>();

  for(priority: SessionPriority): SessionLimiter {
    const view: SessionLimiter = {
      run: (host, signal, task) => runInSlot(view, host, signal, task),
      acquire: async (host, signal) => {
        const token = tokenFor(priority);
        await this.claim(priority, host, token, signal);
        return this.slot(host, token);
      },
      adopt: (slot) => this.adopt(priority, slot),
      first: priority === 'batch',
    };
    return view;
  }

  run<T>(priority: SessionPriority, host: string, signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    return this.for(priority).run(host, signal, task);
  }

  waiting(host: string, priority: SessionPriority): number {
    return this.waits.get(`${priority} ${host}`) ?? 0;
  }

  /** A held lease, renewed until released (a parked connection's too: it is still open). */
  private slot(host: string, token: string): HeldSlot {
    const renew = setInterval(() => {
      void this.redis
        .multi()
        .zadd(this.slotsKey(host), 'XX', Date.now() + this.slotTtlMs, token)
        .pexpire(this.slotsKey(host), this.slotTtlMs * 2)
        .exec()
        .catch(() => undefined);
    }, this.slotTtlMs / 3);
    renew.unref();
    const slot = new Slot(() => {
      clearInterval(renew);
      const releasing = this.releaseSlot(host, token);
      this.releasing.add(releasing);
      void releasing.finally(() => this.releasing.delete(releasing));
    });
    this.held.set(slot, { slot, host, token, renew });
    return slot;
  }

  private async adopt(priority: SessionPriority, slot: HeldSlot): Promise<HeldSlot | undefined> {
    const held = this.held.get(slot);
    if (held === undefined) return undefined;
    const token = tokenFor(priority);
    const adopted = await this.redis
      .hostSlotAdopt(
        this.slotsKey(held.host),
        this.waitingKey(held.host),
        Date.now(),
        held.token,
        token,
        this.slotTtlMs,
        this.options.perHost,
        priority,
        listShare(this.options.perHost),
      )
      .catch(() => 0);
    if (adopted !== 1) return undefined;
    clearInterval(held.renew);
    held.slot.retire();
    return this.slot(held.host, token);
  }

  // Both keys of a mail server in its own cluster slot: the acquire script touches the two.
  private slotsKey = (host: string): string => `${this.options.prefix}:smtp-slots:{${host}}`;
  private waitingKey = (host: string): string => `${this.options.prefix}:smtp-waiting:{${host}}`;

  /**
   * Gives the slot back. A release that cannot reach Redis is tried again in the background
   * until the lease would have lapsed anyway: after an outage the slots free themselves as soon
   * as Redis answers, instead of a lease's length later (which starved the work that waited).
   */
  private async releaseSlot(host: string, token: string): Promise<void> {
    const until = Date.now() + this.slotTtlMs;
    const attempt = async (): Promise<void> => {
      const released = await this.redis.zrem(this.slotsKey(host), token).then(
        () => true,
        () => false,
      );
      if (!released && Date.now() < until) setTimeout(() => void attempt(), RELEASE_RETRY_MS).unref();
    };
    await attempt();
  }

  private async claim(priority: SessionPriority, host: string, token: string, signal: AbortSignal): Promise<void> {
    const waitTtl = this.pollMs[priority] * 5 + 1_000;
    const key = `${priority} ${host}`;
    let counted = false;
    try {
      await this.claimLoop(priority, host, token, signal, waitTtl, () => {
        if (counted) return;
        counted = true;
        this.waits.set(key, (this.waits.get(key) ?? 0) + 1);
      });
    } finally {
      if (counted) {
        const left = (this.waits.get(key) ?? 1) - 1;
        if (left === 0) this.waits.delete(key);
        else this.waits.set(key, left);
      }
    }
  }

  private async claimLoop(
    priority: SessionPriority,
    host: string,
    token: string,
    signal: AbortSignal,
    waitTtl: number,
    refused: () => void,
  ): Promise<void> {
    for (;;) {
      signal.throwIfAborted();
      let granted: number;
      try {
        granted = await this.redis.hostSlotAcquire(
          this.slotsKey(host),
          this.waitingKey(host),
          Date.now(),
          token,
          this.slotTtlMs,
          this.options.perHost,
          priority,
          listShare(this.options.perHost),
          waitTtl,
        );
      } catch (error) {
        this.failedAt = Date.now();
        this.options.onUnavailable?.(error);
        await sleep(this.options.unavailablePollMs ?? 250, undefined, { signal }).catch(() => undefined);
        continue;
      }
      this.failedAt = undefined;
      if (granted === 1) return;
      refused();
      try {
        await sleep(this.pollMs[priority] * (0.5 + Math.random()), undefined, { signal });
      } catch (error) {
        if (priority === 'batch') await this.redis.zrem(this.waitingKey(host), token).catch(() => undefined);
        throw signal.reason instanceof Error ? signal.reason : error;
      }
    }
  }
}
