/**
 * Distributed mode's transport over BullMQ.
 *
 * The gateway keeps one QueueEvents per queue and dispatches its completion events to waiting
 * requests through a map keyed by job id (Job.waitUntilFinished would add two listeners per job,
 * which every event would then walk). Job ids are chosen before the add, so the waiter exists
 * before the job can possibly finish. The deadline travels inside the job: a wait timing out does
 * not cancel a running job, so workers drop jobs whose deadline has passed. A job leaves Redis
 * when it ends (its payload may hold addresses); one nobody waits for any more is removed while
 * still queued.
 */
import { randomUUID } from 'node:crypto';
import { UnrecoverableError, type Job, type Queue, type QueueEvents, type Worker } from 'bullmq';
import type { Logger } from '@svc/telemetry';
import { CLOSE_TIMEOUT_MS, closeConnections, openQueue, openQueueEvents, startWorker, type DurableQueue } from './durable-queue.ts';
import { queueConnection } from './queue-errors.ts';
import { waitForRedis, writeProblem, type Redis, type RedisTarget } from './redis.ts';
import { lockTimingFor } from './takeover.ts';
import {
  awaitJob,
  runHandler,
  type JobEnvelope,
  type JobKind,
  type JobTransport,
  type RegisteredHandler,
  type SubmitOptions,
} from './transport.ts';
import { CallerGoneError, unavailableError } from './transport-errors.ts';
import { withTimeout } from './timeout.ts';

/** How long an enqueue may take before the request gives up with 503. */
const ENQUEUE_TIMEOUT_MS = 2_000;
/** How long the answer to a request past its deadline may wait to learn whether its job was taken. */
const WITHDRAW_TIMEOUT_MS = 1_000;
/** How long `create` waits for the request connection once the events connection is up. */
const CONNECT_TIMEOUT_MS = 10_000;
/** A readiness probe must answer within the orchestrator's timeout (1 s by default in Kubernetes). */
const READY_TIMEOUT_MS = 800;
/** A job crashing its worker (a poison job) is retried this often, then failed. */
const MAX_STALLED_COUNT = 2;

export type { Job, Worker };
// The durable-queue layer (bullPrefix, openQueue, startWorker, ...) and its retries.
export * from './durable-queue.ts';
export * from './queue-errors.ts';
export * from './retry.ts';

interface Waiter {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

class QueueChannel {
  readonly waiters = new Map<string, Waiter>();
  readonly queue: Queue;
  constructor(
    readonly producer: DurableQueue,
    readonly events: QueueEvents,
  ) {
    this.queue = producer.queue;
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
  redis: RedisTarget;
  redisPrefix: string;
  /** The kinds this gateway submits (only their queue names matter here). */
  kinds: ReadonlyArray<Pick<JobKind<unknown, unknown>, 'name'>>;
  /** Where Redis and queue errors go (rate-limited); the queue layer's own logger without. */
  logger?: Logger;
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
    const { logger, redisPrefix } = options;
    const client = queueConnection(options.redis, 'request', 'gateway', logger);
    const eventsClient = queueConnection(options.redis, 'blocking', 'gateway-events', logger);
    const channels = new Map<string, QueueChannel>();
    for (const kind of options.kinds) {
      // Each queue under its own hash tag (bullPrefix), opened by the durable-queue layer.
      const producer = openQueue(kind.name, { connection: client, redisPrefix, ...(logger === undefined ? {} : { logger }) });
      const events = openQueueEvents(kind.name, { connection: eventsClient, redisPrefix, ...(logger === undefined ? {} : { logger }) });
      channels.set(kind.name, new QueueChannel(producer, events));
    }
    const transport = new BullTransport(client, eventsClient, channels);
    // Ready means both connections are: the events to hear completions, the request client to
    // enqueue (a first submit on a client still connecting would be refused as unavailable).
    await Promise.all([...channels.values()].map((channel) => channel.events.waitUntilReady()));
    await waitForRedis(client, CONNECT_TIMEOUT_MS);
    return transport;
  }

  async submit<P, R>(kind: JobKind<P, R>, payload: P, options: SubmitOptions): Promise<R> {
    const channel = this.channels.get(kind.name);
    if (channel === undefined) throw new Error(`no queue for job kind ${kind.name}`);
    if (this.client.status !== 'ready') throw unavailableError();
    if (options.callerGone?.aborted === true) throw new CallerGoneError();
    // Not parsed here: the route or tool validated it; the worker parses what comes off Redis.
    const envelope: JobEnvelope<P> = {
      payload,
      deadlineAt: Date.now() + options.deadlineMs,
      requestId: options.requestId,
    };
    const jobId = randomUUID();
    const settled = new Promise<unknown>((resolve, reject) => channel.waiters.set(jobId, { resolve, reject }));
    try {
      await withTimeout(
        channel.queue.add(kind.name, envelope, { jobId, removeOnComplete: true, removeOnFail: true, attempts: 1 }),
        ENQUEUE_TIMEOUT_MS,
      );
    } catch (error) {
      channel.waiters.delete(jobId);
      throw unavailableError(error);
    }
    const answer = settled.then((raw) => kind.result.parse(typeof raw === 'string' ? JSON.parse(raw) : raw));
    try {
      return await awaitJob(answer, {
        deadlineAt: envelope.deadlineAt,
        requestId: options.requestId,
        kind: kind.name,
        callerGone: options.callerGone,
        withdraw: () => this.withdraw(channel, jobId),
      });
    } finally {
      channel.waiters.delete(jobId);
    }
  }

  /**
   * Nobody waits for the job any more: a job still queued is removed, payload and all, and that
   * tells that no worker took it (a job a worker holds is locked: BullMQ leaves it, and it is
   * removed when it ends). Bounded, so that a frozen Redis cannot hold the answer past its deadline.
   */
  private async withdraw(channel: QueueChannel, jobId: string): Promise<boolean> {
    if (!channel.waiters.has(jobId)) return false;
    return (await withTimeout(channel.queue.remove(jobId), WITHDRAW_TIMEOUT_MS)) === 1;
  }

  /** A write to the job backend would succeed now (the node is a primary; a cluster is ok). */
  async isReady(): Promise<boolean> {
    return (await writeProblem(this.client, READY_TIMEOUT_MS)) === undefined;
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
    const channels = [...this.channels.values()];
    await Promise.allSettled([
      ...channels.map((channel) => withTimeout(channel.events.close(), CLOSE_TIMEOUT_MS)),
      ...channels.map((channel) => channel.producer.close()),
    ]);
    await closeConnections([this.client, this.eventsClient]);
  }
}

export interface BullWorkerOptions {
  redis: RedisTarget;
  redisPrefix: string;
  concurrency: number;
  /**
   * How soon another worker takes over a job whose worker died; the lock and the stalled-job
   * check are sized from it. Default: the queue's own budget (see takeover.ts).
   */
  takeoverMs?: number;
  /** Job failures and stalls (warn, with job id, request id and queue) and Redis errors (rate-limited). */
  logger?: Logger;
  /** Called after each job with its outcome, for metrics. */
  onJobDone?: (queue: string, outcome: 'completed' | 'failed' | 'expired', seconds: number) => void;
}

/** Why a job is dropped unrun: nobody waits for its answer any more. */
function expiredReason(job: Pick<Job, 'attemptsStarted' | 'stalledCounter'>): string {
  return job.attemptsStarted > 1 || job.stalledCounter > 0
    ? 'deadline passed before another worker could take over the job from one that stopped'
    : 'deadline passed before a worker took the job';
}

/**
 * Starts a BullMQ worker for one kind. A crashed worker's jobs are taken over through BullMQ's
 * stalled-job check: its lock lapses (the worker renews it at half its duration while alive),
 * the next check moves the job back to wait, and any worker of the queue takes it. A job whose
 * deadline passed is dropped as unrecoverable, since nobody is waiting for it any more.
 */
export function startBullWorker(handler: RegisteredHandler, options: BullWorkerOptions): Worker {
  const queue = handler.kind.name;
  const log = options.logger?.child({ queue });
  const timing = lockTimingFor(queue, options.takeoverMs);
  const worker = startWorker<JobEnvelope<unknown>, unknown>(
    async (job: Job<JobEnvelope<unknown>>) => {
      const started = performance.now();
      const envelope = job.data;
      const context = { jobId: job.id, requestId: envelope.requestId, attempt: job.attemptsStarted };
      if (envelope.deadlineAt <= Date.now()) {
        options.onJobDone?.(queue, 'expired', 0);
        throw new UnrecoverableError(expiredReason(job));
      }
      log?.debug(context, 'job started');
      try {
        const result = await runHandler(handler.kind, handler.handle, envelope);
        options.onJobDone?.(queue, 'completed', (performance.now() - started) / 1_000);
        log?.debug(context, 'job done');
        return result;
      } catch (error) {
        options.onJobDone?.(queue, 'failed', (performance.now() - started) / 1_000);
        throw error;
      }
    },
    {
      queue,
      redis: options.redis,
      redisPrefix: options.redisPrefix,
      concurrency: options.concurrency,
      lockDurationMs: timing.lockDurationMs,
      stalledIntervalMs: timing.stalledIntervalMs,
      maxStalledCount: MAX_STALLED_COUNT,
      // Whatever the job options say: nothing of a job stays in Redis once it ended.
      removeOnComplete: true,
      removeOnFail: true,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    },
  );
  worker.on('failed', (job, error) => {
    log?.warn({ jobId: job?.id, requestId: job?.data.requestId, attempt: job?.attemptsStarted, reason: error.message }, 'job failed');
  });
  // Its worker stopped renewing the lock (crashed, or an event loop blocked for half a lock duration).
  worker.on('stalled', (jobId) => log?.warn({ jobId, movedTo: 'wait' }, 'job stalled'));
  return worker;
}
