/**
 * Embedded mode's transport: the same contract as BullMQ, with handlers called in this process.
 * The payload is not parsed again: it is the value the route or tool validated, typed, and it
 * crosses no wire. The result is parsed once, as a worker's is, so that a handler returning what
 * the contract forbids fails here as it would over Redis. A caller that leaves cancels its job:
 * the handler's signal aborts.
 *
 * A job whose handler answers synchronously (QR rendering) is settled on the spot, by runJob's
 * deadline and result checks, without the deadline timer, the race and the listener a waiting job
 * needs (under `npm run bench:qr`'s load those were about 3 % of the embedded gateway's CPU), and
 * without reading the caller's signal: nothing ran between the submit and its answer, and a caller
 * who had left before is the door's to refuse (the gateway meters nothing for it).
 */
import { ApiError } from '@svc/contracts';
import { awaitJob, runJob, type JobKind, type JobTransport, type RegisteredHandler, type SubmitOptions } from './transport.ts';

export class InProcessTransport implements JobTransport {
  readonly kind = 'in-process' as const;
  private readonly handlers = new Map<string, RegisteredHandler>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;
  private readonly shutdown = new AbortController();

  constructor(handlers: RegisteredHandler[]) {
    for (const handler of handlers) this.handlers.set(handler.kind.name, handler);
  }

  async submit<P, R>(kind: JobKind<P, R>, payload: P, options: SubmitOptions): Promise<R> {
    const handler = this.handlers.get(kind.name);
    if (this.closed || handler === undefined) {
      throw new ApiError('service_unavailable', 'The service cannot take this job right now.', { headers: { 'Retry-After': '5' } });
    }
    const envelope = { payload, deadlineAt: Date.now() + options.deadlineMs, requestId: options.requestId };
    let work: R | Promise<R>;
    try {
      // `callerGone` is read only by a handler that reads its own signal, or by a job that waits:
      // a caller's signal may be made on first read (the gateway's is).
      work = runJob(
        kind,
        handler.handle,
        payload,
        envelope,
        () => {
          const { callerGone } = options;
          return callerGone === undefined ? [this.shutdown.signal] : [this.shutdown.signal, callerGone];
        },
        options.onProgress,
      );
    } catch (error) {
      // Failed on the spot: awaitJob turns it into the contract's error like any other failure.
      work = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    // Settled on the spot: nothing ran between the submit and now, so a caller who left had left
    // before the submit, and the door's own check (the gateway's metering) refuses to bill it.
    if (!(work instanceof Promise)) return work;
    this.inFlight.add(work);
    void work.catch(() => undefined).finally(() => this.inFlight.delete(work));

    // Taken at once, always: a job here never waits for a worker, so its deadline is the generic one.
    return awaitJob(work, {
      deadlineAt: envelope.deadlineAt,
      requestId: options.requestId,
      kind: kind.name,
      callerGone: options.callerGone,
    });
  }

  isReady(): Promise<boolean> {
    return Promise.resolve(!this.closed);
  }

  /** Stops taking jobs and lets the running ones finish (each is bounded by its own deadline). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
  }
}
