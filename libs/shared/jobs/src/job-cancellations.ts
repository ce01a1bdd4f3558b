/**
 * A caller that leaves while a worker runs its job (distributed mode): its gateway publishes the
 * job's reply id on `<prefix>:jobs:cancelled`, and the worker running that job aborts the handler's
 * signal, as the in-process transport aborts it with the caller's own signal. A verification's SMTP
 * sessions then end at once instead of running on for nobody (decisions: a tool call "stops
 * (unbilled) when the client cancels or drops the request"). Best effort: a message lost (Redis
 * gone, or sent while the job was being taken, before its worker watched it) leaves the job to run
 * to its end, unbilled as before. Bundled kinds (QR renders, well under a millisecond) do not listen.
 */
import { CallerGoneError } from './transport-errors.ts';
import type { Redis } from './redis.ts';

export const cancelledJobsChannel = (prefix: string): string => `${prefix}:jobs:cancelled`;

/** Tells every worker that nobody waits for the answer of the job with this reply id any more. */
export async function publishJobCancelled(redis: Redis, prefix: string, replyId: string): Promise<void> {
  await redis.publish(cancelledJobsChannel(prefix), replyId);
}

/** A worker's side: one signal per running job, aborted when its cancellation arrives. */
export class JobCancellations {
  private readonly running = new Map<string, AbortController>();
  private readonly subscribed: Promise<unknown>;

  /** `subscriber` is a connection of its own (subscriber mode takes it whole), closed by close(). */
  constructor(
    private readonly subscriber: Redis,
    prefix: string,
  ) {
    const channel = cancelledJobsChannel(prefix);
    subscriber.on('message', (from: string, replyId: string) => {
      if (from === channel) this.running.get(replyId)?.abort(new CallerGoneError());
    });
    // Its failures are the connection's, logged there; ioredis subscribes again after a reconnect.
    this.subscribed = subscriber.subscribe(channel).catch(() => undefined);
  }

  /** The signal of the job answered under `replyId`, from its start until `done()`. */
  watch(replyId: string): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    this.running.set(replyId, controller);
    return { signal: controller.signal, done: () => this.running.delete(replyId) };
  }

  async close(): Promise<void> {
    await this.subscribed;
    await this.subscriber.quit().catch(() => undefined);
  }
}
