/**
 * At most N concurrent SMTP sessions per mail server (per worker process): politeness towards
 * the servers we probe, and the way not to look like a spammer. Waiters are served in order and
 * leave the queue when their batch's deadline aborts them.
 */
/** What the engine needs of a limiter: run `task` holding one session slot to `host`. */
export interface SessionLimiter {
  run<T>(host: string, signal: AbortSignal, task: () => Promise<T>): Promise<T>;
}

export class HostLimiter implements SessionLimiter {
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly perHost: number) {}

  async run<T>(host: string, signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    await this.acquire(host, signal);
    try {
      return await task();
    } finally {
      this.release(host);
    }
  }

  private acquire(host: string, signal: AbortSignal): Promise<void> {
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
