/**
 * At most N concurrent SMTP connections per mail server: politeness towards the servers we
 * probe, and the way not to look like a spammer. A slot is held from before a connection opens
 * until it is closed; a connection parked between two batches (smtp/idle-sessions.ts) keeps its
 * slot, and the session that takes the connection takes the slot over (`adopt`).
 */
import type { HeldSlot } from '../smtp/idle-sessions.ts';

export type { HeldSlot } from '../smtp/idle-sessions.ts';

export interface SessionLimiter {
  /** Runs `task` once a slot for `host` is free, released when it settles; gives up waiting (rejects) when `signal` aborts. */
  run<T>(host: string, signal: AbortSignal, task: () => Promise<T>): Promise<T>;
  /** A slot for `host`, held until released (by whoever holds the connection then); rejects when `signal` aborts first. */
  acquire(host: string, signal: AbortSignal): Promise<HeldSlot>;
  /**
   * Takes over the slot of a parked connection for this kind of work, when the limiter's rules
   * allow it now (a list does not take a slot a batch is waiting for); undefined otherwise, and
   * for a slot of another limiter: the caller then ends that connection, which releases its slot.
   */
  adopt(slot: HeldSlot): Promise<HeldSlot | undefined>;
  /**
   * Work that goes before the rest (batches): among the sessions of this process waiting for a
   * server, it is handed a connection parked meanwhile first (smtp/idle-sessions.ts `wait`).
   */
  readonly first?: boolean;
}

/** `run` over `acquire`: the slot goes back when the task settles. */
export async function runInSlot<T>(limiter: Pick<SessionLimiter, 'acquire'>, host: string, signal: AbortSignal, task: () => Promise<T>) {
  const slot = await limiter.acquire(host, signal);
  try {
    return await task();
  } finally {
    slot.release();
  }
}

/** A limiter's slot handle: released once, however many paths end it, or retired when its count passes to another handle. */
export class Slot implements HeldSlot {
  private done = false;

  constructor(private readonly onRelease: () => void) {}

  release(): void {
    if (this.done) return;
    this.done = true;
    this.onRelease();
  }

  /** Ends this handle without giving its slot back (`adopt` moves it to a new one); false when it was released already. */
  retire(): boolean {
    if (this.done) return false;
    this.done = true;
    return true;
  }
}

/** The per-process SessionLimiter. Waiters are served in order and leave the queue when their batch's deadline aborts them. */
export class HostLimiter implements SessionLimiter {
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();
  /** Slots this limiter gave out, with their server. */
  private readonly held = new WeakMap<HeldSlot, { slot: Slot; host: string }>();

  constructor(private readonly perHost: number) {}

  run<T>(host: string, signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    return runInSlot(this, host, signal, task);
  }

  async acquire(host: string, signal: AbortSignal): Promise<HeldSlot> {
    await this.take(host, signal);
    return this.slot(host);
  }

  /** Without kinds of work there is nothing to weigh: the slot passes as it is. */
  adopt(slot: HeldSlot): Promise<HeldSlot | undefined> {
    const held = this.held.get(slot);
    if (held === undefined || !held.slot.retire()) return Promise.resolve(undefined);
    return Promise.resolve(this.slot(held.host));
  }

  private slot(host: string): HeldSlot {
    const slot = new Slot(() => this.release(host));
    this.held.set(slot, { slot, host });
    return slot;
  }

  private take(host: string, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const running = this.active.get(host) ?? 0;
    if (running < this.perHost) {
      this.active.set(host, running + 1);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const queue = this.waiting.get(host) ?? [];
      const grant = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const index = queue.indexOf(grant);
        if (index >= 0) queue.splice(index, 1);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      queue.push(grant);
      this.waiting.set(host, queue);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private release(host: string): void {
    const next = this.waiting.get(host)?.shift();
    if (next !== undefined) {
      next(); // the slot passes straight to the next waiter
      return;
    }
    const running = (this.active.get(host) ?? 1) - 1;
    if (running <= 0) this.active.delete(host);
    else this.active.set(host, running);
    if (this.waiting.get(host)?.length === 0) this.waiting.delete(host);
  }
}
