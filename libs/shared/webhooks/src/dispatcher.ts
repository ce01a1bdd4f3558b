/** The seam the lists code sees: hand over an event; delivery, signing and retries happen behind it. */
import type { CallbackEvent } from './events.ts';

/** Durable, retried delivery: enqueue returns once the event is stored (Redis) or queued (memory). */
export interface CallbackDispatcher {
  enqueue(event: CallbackEvent): Promise<void>;
  close(): Promise<void>;
}
