/**
 * Embedded mode's dispatcher: the same attempts and the same schedule as the BullMQ one, with
 * timers in this process instead of delayed jobs in Redis. Pending events are lost when the
 * process stops, as is everything else embedded mode keeps.
 */
import type { Logger } from '@svc/telemetry';
import { attemptDelivery, type AttemptContext } from './attempt.ts';
import type { DeliveryOptions } from './deliver.ts';
import type { CallbackDispatcher } from './dispatcher.ts';
import { callbackEventSchema, type CallbackEvent } from './events.ts';
import { retrySchedule, type RetrySchedule } from './schedule.ts';
import type { SecretSource } from './secrets.ts';

export interface InProcessCallbackDispatcherOptions {
  secrets: SecretSource;
  allowPrivate: boolean;
  logger: Logger;
  schedule?: Partial<RetrySchedule>;
  /** Deadline of one attempt (default 10 s), and test hooks: resolver, extra CA. */
  delivery?: Omit<DeliveryOptions, 'allowPrivate' | 'signal'>;
}

export class InProcessCallbackDispatcher implements CallbackDispatcher {
  private readonly context: AttemptContext;
  private readonly controller = new AbortController();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(options: InProcessCallbackDispatcherOptions) {
    this.context = {
      secrets: options.secrets,
      schedule: retrySchedule(options.schedule),
      logger: options.logger,
      delivery: { ...options.delivery, allowPrivate: options.allowPrivate },
      signal: this.controller.signal,
    };
  }

  // async: a malformed event is a rejection, like a failed enqueue to Redis.
  // eslint-disable-next-line @typescript-eslint/require-await
  async enqueue(event: CallbackEvent): Promise<void> {
    if (this.closed) throw new Error('callback dispatcher is closed');
    this.later(callbackEventSchema.parse(event), 1, Date.now(), 0);
  }

  /** Events waiting for an attempt or in one. */
  get pending(): number {
    return this.timers.size + this.running.size;
  }

  private later(event: CallbackEvent, attempt: number, enqueuedAt: number, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const run = this.run(event, attempt, enqueuedAt);
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }, delayMs);
    // A retry an hour away must not keep a stopping process alive.
    timer.unref();
    this.timers.add(timer);
  }

  private async run(event: CallbackEvent, attempt: number, enqueuedAt: number): Promise<void> {
    const result = await attemptDelivery(event, attempt, enqueuedAt, this.context);
    if (result.outcome === 'retry' && !this.closed) this.later(event, attempt + 1, enqueuedAt, result.delayMs);
  }

  /** Drops waiting retries and cancels attempts in flight. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.controller.abort();
    await Promise.allSettled([...this.running]);
  }
}
