/**
 * The durable-queue layer every BullMQ queue of the product goes through (request jobs, list work,
 * callbacks): its connections, its `error` events, its retries, how a final failure is told from
 * a retry, and a close that never waits on a Redis that is gone. Errors go to the process's
 * rate-limited error log (queue-errors.ts).
 */
import { Queue, Worker, type Job, type KeepJobs, type Processor } from 'bullmq';
import { errorKind, type Logger } from '@svc/telemetry';
import { queueConnection, queueErrorLog, watchErrors } from './queue-errors.ts';
import type { Redis, RedisTarget } from './redis.ts';
import type { RetryPolicy } from './retry.ts';
import { withTimeout } from './timeout.ts';

/**
 * BullMQ's prefix for one queue. Every key of a queue carries the queue's hash tag, BullMQ's
 * documented pattern for Redis Cluster (its scripts touch many keys of one queue at once), and
 * each queue has its own tag so that queues spread over the primaries. Keys still start with
 * REDIS_PREFIX, so ACLs and clean-ups by prefix keep working: `svc:bull:{qr}:qr:wait`.
 */
export const bullPrefix = (redisPrefix: string, queue: string): string => `${redisPrefix}:bull:{${queue}}`;

/** Longest a queue's close may wait for Redis before its connection is dropped. */
export const CLOSE_TIMEOUT_MS = 2_000;
/** The backoff type of jobs whose wait is the queue's RetryPolicy (the worker's backoff strategy). */
const POLICY_BACKOFF = 'retry-policy';

/** Quits `connections` within the close budget, then drops them whatever Redis said. */
export async function closeConnections(connections: readonly Redis[]): Promise<void> {
  await Promise.allSettled(connections.map((connection) => withTimeout(connection.quit(), CLOSE_TIMEOUT_MS)));
  for (const connection of connections) connection.disconnect();
}

/** Job options that make BullMQ retry as `policy` says (the worker's backoff strategy reads it). */
export const retryJobOptions = (policy: RetryPolicy) => ({ attempts: policy.attempts, backoff: { type: POLICY_BACKOFF } });

/**
 * Whether a failed job will not run again: BullMQ sets `finishedOn` only when it moves a job to
 * the failed set (attempts used up, an UnrecoverableError, or stalled more often than allowed),
 * never when it schedules a retry.
 */
export const isFinalFailure = (job: Pick<Job, 'finishedOn'>): boolean => job.finishedOn !== undefined && job.finishedOn !== null;

export interface DurableQueue {
  queue: Queue;
  close(): Promise<void>;
}

export type QueueConnection = { connection: Redis } | { redis: RedisTarget; connectionName: string };

/**
 * A producer's queue, on a connection it is given (shared, closed by its owner) or on one of its
 * own (a fail-fast `request` connection, closed with the queue).
 */
export function openQueue(name: string, options: QueueConnection & { redisPrefix: string; logger?: Logger }): DurableQueue {
  const log = queueErrorLog(options.logger);
  const shared = 'connection' in options;
  const connection = shared ? options.connection : queueConnection(options.redis, 'request', options.connectionName, options.logger);
  const queue = new Queue(name, { connection, prefix: bullPrefix(options.redisPrefix, name) });
  watchErrors(queue, log, 'queue', { queue: name });
  return {
    queue,
    close: async () => {
      await withTimeout(queue.close(), CLOSE_TIMEOUT_MS).catch((error: Error) =>
        log('warn', `queue-close:${errorKind(error)}`, { queue: name, err: error }, 'queue did not close cleanly'),
      );
      if (!shared) await closeConnections([connection]);
    },
  };
}

/**
 * A producer's queue on a connection its owner shares, opened at first use, only once that
 * connection is ready, and opened anew after a failed opening. BullMQ asks the server its version
 * once, as a queue opens, and a queue whose asking failed refuses every job from then on. On a
 * Cluster it takes the connection's `connect` state (slots known, ready check under way) for
 * ready, where our connections, with no offline queue, refuse commands: a list queue opened there
 * (the gateway's, right after its transport was up) never queued a list again, and every list
 * waited for the janitor's 30 s, `queued` (test/topologies/list-queue-start.test.ts).
 */
export class ReadyQueue {
  private opening: Promise<DurableQueue> | undefined;

  constructor(
    private readonly name: string,
    private readonly options: { connection: Redis; redisPrefix: string; logger?: Logger },
  ) {}

  /** The opened queue; rejects at once while the connection is not ready (nothing is opened then). */
  open(): Promise<DurableQueue> {
    if (this.opening !== undefined) return this.opening;
    const { connection } = this.options;
    if (connection.status !== 'ready')
      return Promise.reject(new Error(`the ${this.name} queue's Redis connection is not ready (${connection.status})`));
    const producer = openQueue(this.name, this.options);
    const opening = producer.queue.waitUntilReady().then(
      () => producer,
      async (error: unknown) => {
        this.opening = undefined;
        await producer.close();
        throw error;
      },
    );
    this.opening = opening;
    return opening;
  }

  /** Closes the queue if it was opened (its connection stays its owner's). */
  async close(): Promise<void> {
    const producer = await this.opening?.catch(() => undefined);
    await producer?.close();
  }
}

export interface DurableWorkerOptions<D> {
  queue: string;
  /** The topology from the configuration (`config.redis`), or a plain URL in tools and tests. */
  redis: RedisTarget;
  redisPrefix: string;
  concurrency: number;
  /** A job's lock, the stalled-job check, and how often a job may stall before it is failed. */
  lockDurationMs: number;
  stalledIntervalMs: number;
  maxStalledCount: number;
  /** The retries of jobs added with `retryJobOptions(retry)`. */
  retry?: RetryPolicy;
  /** What BullMQ keeps of ended jobs, whatever the job options say. */
  removeOnComplete?: KeepJobs | boolean;
  removeOnFail?: KeepJobs | boolean;
  logger?: Logger;
  /** Name of its Redis connection (CLIENT LIST, error lines). */
  connectionName?: string;
  /**
   * A `blocking` connection for the worker's own commands, when its owner writes on it too (what
   * the owner sends before a job's end then reaches Redis before BullMQ's command that ends it);
   * its owner closes it. Without, the worker opens one and quits it when it closes.
   */
  connection?: Redis;
  /** A job that will not run again (see isFinalFailure); a rejection is logged, not lost. */
  onFinalFailure?: (job: Job<D>, error: Error) => void | Promise<void>;
}

/**
 * A BullMQ worker on a `blocking` connection of its own (it rides out Redis restarts; BullMQ
 * duplicates it for its blocking reads), quit when the worker closes. `Worker.close` waits for
 * the active jobs, so its callers bound it by the jobs' own deadlines.
 */
export function startWorker<D, R>(processor: Processor<D, R>, options: DurableWorkerOptions<D>): Worker<D, R> {
  const log = queueErrorLog(options.logger);
  const connection =
    options.connection ?? queueConnection(options.redis, 'blocking', options.connectionName ?? `worker-${options.queue}`, options.logger);
  const { retry } = options;
  const worker = new Worker<D, R>(options.queue, processor, {
    connection,
    prefix: bullPrefix(options.redisPrefix, options.queue),
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs,
    stalledInterval: options.stalledIntervalMs,
    maxStalledCount: options.maxStalledCount,
    ...(options.removeOnComplete === undefined ? {} : { removeOnComplete: keep(options.removeOnComplete) }),
    ...(options.removeOnFail === undefined ? {} : { removeOnFail: keep(options.removeOnFail) }),
    ...(retry === undefined
      ? {}
      : { settings: { backoffStrategy: (attemptsMade: number, _type?: string, error?: Error) => retry.delayMs(attemptsMade, error) } }),
  });
  watchErrors(worker, log, 'worker', { queue: options.queue });
  const { onFinalFailure } = options;
  if (onFinalFailure !== undefined)
    worker.on('failed', (job, error) => {
      if (job === undefined || !isFinalFailure(job)) return;
      void Promise.resolve()
        .then(() => onFinalFailure(job, error))
        .catch((failure: Error) =>
          log(
            'error',
            `final-failure:${options.queue}:${errorKind(failure)}`,
            { queue: options.queue, jobId: job.id, err: failure },
            'a failed job could not be recorded',
          ),
        );
    });
  if (options.connection === undefined) worker.on('closed', () => void closeConnections([connection]));
  return worker;
}

/** BullMQ's worker options take KeepJobs only; `true` is "keep none", `false` "keep all". */
const keep = (value: KeepJobs | boolean): KeepJobs =>
  value === true ? { count: 0 } : value === false ? { count: Number.MAX_SAFE_INTEGER } : value;
