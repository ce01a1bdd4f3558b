/**
 * Distributed mode's transport over BullMQ.
 *
 * The gateway keeps one QueueEvents per queue and dispatches its completion events to waiting
 * requests through a map keyed by job id (Job.waitUntilFinished would add two listeners per job,
 * which every event would then walk). Job ids are chosen before the add, so the waiter exists
 * before the job can possibly finish. The deadline travels inside the job: a wait timing out does
 * not cancel a BullMQ job, so workers drop jobs whose deadline has passed.
 */
import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents, UnrecoverableError, Worker, type Job } from 'bullmq';

export type { Worker };
import { ApiError } from '@svc/contracts';
import { createRedis, type Redis } from './redis.ts';
import { runHandler, type JobEnvelope, type JobKind, type JobTransport, type RegisteredHandler, type SubmitOptions } from './transport.ts';
import { deadlineError, jobFailedError, unavailableError } from './transport-errors.ts';

/** Completed jobs stay briefly (a late waiter can still read them), then go: no unbounded growth. */
export const REMOVE_ON_COMPLETE = { age: 60, count: 1_000 } as const;
export const REMOVE_ON_FAIL = { age: 24 * 3_600, count: 5_000 } as const;
/** How long an enqueue may take before the request gives up with 503. */
const ENQUEUE_TIMEOUT_MS = 2_000;
const CLOSE_TIMEOUT_MS = 2_000;

export const bullPrefix = (redisPrefix: string): string => `${redisPrefix}:bull`;

interface Waiter {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

class QueueChannel {
  readonly waiters = new Map<string, Waiter>();
  constructor(
    readonly queue: Queue,
    readonly events: QueueEvents,
  ) {
    events.on('completed', ({ jobId, returnvalue }) => this.settle(jobId, (w) => w.resolve(returnvalue)));
    events.on('failed', ({ jobId, failedReason }) => this.settle(jobId, (w) => w.reject(new Error(failedReason))));
  }

  private settle(jobId: string, action: (waiter: Waiter) => void): void {
    const waiter = this.waiters.get(jobId);
    if (waiter === undefined) return;
    this.waiters.delete(jobId);
    action(waiter);
  }
}

export interface BullTransportOptions {
  url: string;
  redisPrefix: string;
  /** The kinds this gateway submits (only their queue names matter here). */
  kinds: ReadonlyArray<Pick<JobKind<unknown, unknown>, 'name'>>;
}

export class BullTransport implements JobTransport {
  readonly kind = 'bullmq' as const;

  private constructor(
    private readonly client: Redis,
    private readonly eventsClient: Redis,
    private readonly channels: Map<string, QueueChannel>,
  ) {}

  /** Connects and starts QueueEvents for every kind; resolves once they listen (before the first add). */
  static async create(options: BullTransportOptions): Promise<BullTransport> {
    const client = createRedis(options.url, 'request', 'gateway');
    const eventsClient = createRedis(options.url, 'blocking', 'gateway-events');
    const prefix = bullPrefix(options.redisPrefix);
    const channels = new Map<string, QueueChannel>();
    for (const kind of options.kinds) {
      const queue = new Queue(kind.name, { connection: client, prefix });
      queue.on('error', () => undefined);
      // QueueEvents duplicates the connection it is given (it blocks on XREAD).
      const events = new QueueEvents(kind.name, { connection: eventsClient, prefix, autorun: true });
      events.on('error', () => undefined);
      channels.set(kind.name, new QueueChannel(queue, events));
    }
    const transport = new BullTransport(client, eventsClient, channels);
    await Promise.all([...channels.values()].map((channel) => channel.events.waitUntilReady()));
    return transport;
  }

  async submit<P, R>(kind: JobKind<P, R>, payload: P, options: SubmitOptions): Promise<R> {
    const channel = this.channels.get(kind.name);
    if (channel === undefined) throw new Error(`no queue for job kind ${kind.name}`);
    if (this.client.status !== 'ready') throw unavailableError();
    const envelope: JobEnvelope<P> = {
      payload: kind.payload.parse(payload),
      deadlineAt: Date.now() + options.deadlineMs,
      requestId: options.requestId,
    };
    const jobId = randomUUID();
    const settled = new Promise<unknown>((resolve, reject) => channel.waiters.set(jobId, { resolve, reject }));
    let timer: NodeJS.Timeout | undefined;
    try {
      await withTimeout(
        channel.queue.add(kind.name, envelope, { jobId, removeOnComplete: REMOVE_ON_COMPLETE, removeOnFail: REMOVE_ON_FAIL, attempts: 1 }),
        ENQUEUE_TIMEOUT_MS,
      );
    } catch (error) {
      channel.waiters.delete(jobId);
      throw unavailableError(error);
    }
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(deadlineError()), Math.max(0, envelope.deadlineAt - Date.now()));
    });
    try {
      const raw = await Promise.race([settled, deadline]);
      if (Date.now() >= envelope.deadlineAt) throw deadlineError();
      return kind.result.parse(typeof raw === 'string' ? JSON.parse(raw) : raw);
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw jobFailedError(options.requestId, error);
    } finally {
      clearTimeout(timer);
      channel.waiters.delete(jobId);
    }
  }

  async isReady(): Promise<boolean> {
    if (this.client.status !== 'ready') return false;
    try {
      await withTimeout(this.client.ping(), 1_000);
      return true;
    } catch {
      return false;
    }
  }

  /** Number of requests waiting for a job result (for metrics and graceful shutdown). */
  get pending(): number {
    let count = 0;
    for (const channel of this.channels.values()) count += channel.waiters.size;
    return count;
  }

  queues(): Queue[] {
    return [...this.channels.values()].map((channel) => channel.queue);
  }

  /** Bounded: a close never waits on a Redis that is gone (each step capped, then a hard disconnect). */
  async close(): Promise<void> {
    for (const channel of this.channels.values()) {
      for (const waiter of channel.waiters.values()) waiter.reject(unavailableError());
      channel.waiters.clear();
    }
    const steps = [...this.channels.values()].flatMap((channel) => [channel.events.close(), channel.queue.close()]);
    await Promise.allSettled(steps.map((step) => withTimeout(step, CLOSE_TIMEOUT_MS)));
    await Promise.allSettled([this.client, this.eventsClient].map((client) => withTimeout(client.quit(), CLOSE_TIMEOUT_MS)));
    this.client.disconnect();
    this.eventsClient.disconnect();
  }
}

export interface BullWorkerOptions {
  url: string;
  redisPrefix: string;
  concurrency: number;
  /** How long a job's lock lives without renewal: a crashed worker's job is retried after it. */
  lockDurationMs?: number;
  /** Called after each job with its outcome, for metrics. */
  onJobDone?: (queue: string, outcome: 'completed' | 'failed' | 'expired', seconds: number) => void;
}

/**
 * Starts a BullMQ worker for one kind. A crashed worker's jobs are retried by BullMQ's stalled-job
 * check (the lock below expires and another worker takes the job); a job whose deadline passed is
 * dropped as unrecoverable, since nobody is waiting for it any more.
 */
export function startBullWorker(handler: RegisteredHandler, options: BullWorkerOptions): Worker {
  // BullMQ duplicates this client for its blocking reads; both ride out Redis restarts.
  const connection = createRedis(options.url, 'blocking', `worker-${handler.kind.name}`);
  const worker = new Worker(
    handler.kind.name,
    async (job: Job<JobEnvelope<unknown>>) => {
      const started = performance.now();
      const envelope = job.data;
      if (envelope.deadlineAt <= Date.now()) {
        options.onJobDone?.(handler.kind.name, 'expired', 0);
        throw new UnrecoverableError('deadline passed before a worker took the job');
      }
      try {
        const result = await runHandler(handler.kind, handler.handle, envelope);
        options.onJobDone?.(handler.kind.name, 'completed', (performance.now() - started) / 1_000);
        return result;
      } catch (error) {
        options.onJobDone?.(handler.kind.name, 'failed', (performance.now() - started) / 1_000);
        throw error;
      }
    },
    {
      connection,
      prefix: bullPrefix(options.redisPrefix),
      concurrency: options.concurrency,
      // Short locks so a crashed worker's job is picked up again while its caller still waits.
      lockDuration: options.lockDurationMs ?? 10_000,
      stalledInterval: Math.max(500, Math.floor((options.lockDurationMs ?? 10_000) / 2)),
      maxStalledCount: 1,
    },
  );
  worker.on('error', () => undefined);
  worker.on('closed', () => void connection.quit().catch(() => undefined));
  return worker;
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
