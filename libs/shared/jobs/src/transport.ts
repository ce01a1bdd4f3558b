/**
 * The job transport: the one seam between the gateway and the workers. The gateway submits a
 * typed job and awaits its typed result within a deadline; whether that crosses Redis (BullMQ) or
 * stays in the process (embedded mode) is the transport's business, not the caller's.
 */
import { ApiError, type JobKind } from '@svc/contracts';
import { deadlineSignal } from './deadline-signal.ts';
import { CallerGoneError, deadlineError, jobFailedError, notTakenError } from './transport-errors.ts';

export type { JobKind };

/** What travels through the queue: the payload plus what a worker needs to honour the deadline. */
export interface JobEnvelope<P> {
  /** The protocol version of the gateway that sent it (job-protocol.ts); absent from one of v0. */
  v?: number;
  payload: P;
  /** Epoch ms after which nobody waits for the answer: workers drop the job. */
  deadlineAt: number;
  requestId: string;
  /** Where the gateway waits for the answer (its Redis inbox, reply-channel.ts); absent in process. */
  replyTo?: string;
  /**
   * The gateway reads answers whose string `body` follows their JSON instead of being escaped in
   * it (reply-channel.ts). Absent from an earlier release's gateway, whose workers answer in JSON.
   */
  framedReplies?: boolean;
  /**
   * The gateway has a caller following this job's progress (protocol v2): its worker pushes
   * progress messages to `replyTo` while it runs. Absent: none are sent.
   */
  progress?: boolean;
}

export interface JobContext {
  deadlineAt: number;
  requestId: string;
  /** Aborted when the deadline passes, the worker shuts down or (in process) the caller is gone. */
  signal: AbortSignal;
  /** Reports how far the job is (a verify batch: addresses settled of its total), where a caller listens. */
  progress?: (done: number, total: number) => void;
}

/**
 * A handler answers its result, or a promise of it. A handler with nothing to wait for (QR
 * rendering) answers the value itself, so that in process its job settles on the spot (runJob).
 */
export type JobHandler<P, R> = (payload: P, context: JobContext) => R | Promise<R>;

export interface SubmitOptions {
  /** How long the caller waits for the result. */
  deadlineMs: number;
  requestId: string;
  /**
   * Aborted when the caller is gone: the wait ends with CallerGoneError, and the job is
   * cancelled where that is cheap (in process: its signal; over BullMQ: while still queued).
   */
  callerGone?: AbortSignal;
  /**
   * Called with the job's progress as the handler reports it. The in-process transport passes it
   * to the handler; over BullMQ the job asks its worker for progress messages (protocol v2,
   * throttled), so it is called less often there, and not at all by a worker of v1.
   */
  onProgress?: (done: number, total: number) => void;
}

export interface JobTransport {
  readonly kind: 'in-process' | 'bullmq';
  /**
   * Resolves with the validated result, or rejects with an ApiError:
   * `timeout` (deadline passed), `service_unavailable` (cannot enqueue), `internal_error` (job failed),
   * or the ApiError the handler threw, as itself in either transport (job-protocol.ts);
   * or with CallerGoneError once `callerGone` aborts.
   */
  submit<P, R>(kind: JobKind<P, R>, payload: P, options: SubmitOptions): Promise<R>;
  /** Whether a job could be taken now (readiness probe). */
  isReady(): Promise<boolean>;
  close(): Promise<void>;
}

/** A handler registered for one kind, type-erased so that several kinds fit one map. */
export interface RegisteredHandler {
  kind: JobKind<unknown, unknown>;
  handle: JobHandler<unknown, unknown>;
}

export function registerHandler<P, R>(kind: JobKind<P, R>, handle: JobHandler<P, R>): RegisteredHandler {
  return { kind: kind, handle: handle as JobHandler<unknown, unknown> };
}

/**
 * What a handler is given, and `release` to call when it has ended. Its signal (aborted at the
 * deadline, or when one of `sources` aborts) is made on first read: a QR job never reads it, and
 * making it for every job cost more CPU than encoding a code (profile of the embedded gateway
 * under `npm run bench:qr`'s load).
 */
export function jobContext(
  envelope: JobEnvelope<unknown>,
  sources: () => readonly AbortSignal[] = () => [],
  progress?: (done: number, total: number) => void,
): { context: JobContext; release: () => void; timedOut: () => boolean } {
  let made: ReturnType<typeof deadlineSignal> | undefined;
  const context: JobContext = {
    deadlineAt: envelope.deadlineAt,
    requestId: envelope.requestId,
    ...(progress === undefined ? {} : { progress }),
    get signal() {
      made ??= deadlineSignal(envelope.deadlineAt, sources());
      return made.signal;
    },
  };
  const timedOut = () => Date.now() >= envelope.deadlineAt || made?.expired() === true;
  return { context, release: () => made?.release(), timedOut };
}

/**
 * Runs a handler on its payload, in either transport: the context released when it ends, the
 * result parsed. A handler that answers because its deadline aborted it answers too late, even
 * when that timer fired a moment before the wait's own: the job is a timeout either way.
 *
 * A handler that answers synchronously gets its parsed result back synchronously (or the throw),
 * so that the in-process transport can settle it without a promise, timer or listener; one that
 * answers a promise gets a promise.
 */
export function runJob<P, R>(
  kind: JobKind<P, R>,
  // Its answer is parsed by `kind.result` whatever type it claims (a registered handler's is unknown).
  handle: JobHandler<P, unknown>,
  payload: P,
  envelope: JobEnvelope<unknown>,
  sources?: () => readonly AbortSignal[],
  progress?: (done: number, total: number) => void,
): R | Promise<R> {
  const { context, release, timedOut } = jobContext(envelope, sources, progress);
  const finish = (result: unknown): R => {
    if (timedOut()) throw deadlineError();
    return kind.result.parse(result);
  };
  // A handler that gives up because its deadline aborted it failed too late, likewise: a timeout.
  const failed = (error: unknown): never => {
    throw timedOut() ? deadlineError() : error;
  };
  let answer: unknown;
  try {
    answer = handle(payload, context);
  } catch (error) {
    release();
    return failed(error);
  }
  if (!(answer instanceof Promise)) {
    release();
    return finish(answer);
  }
  return answer.then(finish, failed).finally(release);
}

/** runJob, always as a promise: a handler throwing before its first await fails the job like any other error. */
export async function handleJob<P, R>(
  kind: JobKind<P, R>,
  handle: JobHandler<P, unknown>,
  payload: P,
  envelope: JobEnvelope<unknown>,
  sources?: () => readonly AbortSignal[],
  progress?: (done: number, total: number) => void,
): Promise<R> {
  return runJob(kind, handle, payload, envelope, sources, progress);
}

/**
 * Runs a job that came off the wire: its payload parsed before the handler sees it (what Redis
 * holds is not trusted to be what a gateway sent); `progress` where its gateway listens; its signal
 * also aborts with `cancelled` (its caller left: job-cancellations.ts).
 */
export function runHandler<P, R>(
  kind: JobKind<P, R>,
  handle: JobHandler<P, R>,
  envelope: JobEnvelope<unknown>,
  progress?: (done: number, total: number) => void,
  cancelled?: AbortSignal,
): Promise<R> {
  const sources = cancelled === undefined ? undefined : () => [cancelled];
  return handleJob(kind, handle, kind.payload.parse(envelope.payload), envelope, sources, progress);
}

/** Settles when `signal` aborts (never when it is absent), for racing a wait against the caller. */
export function whenAborted(signal: AbortSignal | undefined, error: () => Error): { promise: Promise<never>; dispose(): void } {
  if (signal === undefined) return { promise: new Promise<never>(() => undefined), dispose: () => undefined };
  let onAbort: () => void = () => undefined;
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(error());
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

export interface WaitOptions {
  deadlineAt: number;
  requestId: string;
  /** The job's kind, named in the answer when no worker of that kind took the job. */
  kind: string;
  callerGone?: AbortSignal;
  /**
   * Runs once when the wait ends without the job's answer (deadline, or `callerLeft`): takes the
   * job back if no worker has taken it yet, and resolves whether it did (bounded by its owner).
   */
  withdraw?: (callerLeft: boolean) => Promise<boolean>;
}

/**
 * How both transports wait for a submitted job: its `outcome`, or `timeout` at the deadline (also
 * for an answer that came too late, or a handler that gave up at the deadline; saying so when no
 * worker took the job at all), CallerGoneError once `callerGone` aborts, `internal_error` when
 * the job failed.
 */
export async function awaitJob<R>(outcome: Promise<R>, options: WaitOptions): Promise<R> {
  const { deadlineAt, requestId, callerGone, withdraw } = options;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(deadlineError()), Math.max(0, deadlineAt - Date.now()));
  });
  const gone = whenAborted(callerGone, () => new CallerGoneError());
  try {
    const result = await Promise.race([outcome, deadline, gone.promise]);
    if (Date.now() >= deadlineAt) throw deadlineError();
    return result;
  } catch (error) {
    if (error instanceof CallerGoneError) {
      void withdraw?.(true).catch(() => false);
      throw error;
    }
    if (error instanceof ApiError && error.code === 'timeout') {
      const untaken = (await withdraw?.(false).catch(() => false)) === true;
      throw untaken ? notTakenError(options.kind) : error;
    }
    if (error instanceof ApiError) throw error;
    if (Date.now() >= deadlineAt) throw deadlineError();
    throw jobFailedError(requestId, error);
  } finally {
    clearTimeout(timer);
    gone.dispose();
  }
}
