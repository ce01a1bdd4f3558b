/**
 * Distributed mode's list queue on BullMQ (queue `verify-list`, beside the request/response
 * queues). BullMQ gives what a list's work needs to survive any process: jobs kept in Redis,
 * priorities, delayed jobs for retries, and a lock per running job whose expiry hands the job of
 * a crashed worker to another one. The job handler is idempotent (see the store), so a job run
 * twice records nothing twice. Connections, errors, retries and close are the durable-queue
 * layer's (`@svc/jobs/bullmq`).
 */
import { openQueue, retryJobOptions, startWorker, type DurableQueue, type Job, type Worker } from '@svc/jobs/bullmq';
import type { Redis, RedisTarget } from '@svc/jobs/redis';
import type { Logger } from '@svc/telemetry';
import {
  LIST_QUEUE,
  LIST_RETRY,
  listJobId,
  listJobPriority,
  listJobSchema,
  type ListJob,
  type ListJobProcessor,
  type ListQueue,
  type QueuedListJob,
} from './queue.ts';

const JOB_OPTIONS = {
  ...retryJobOptions(LIST_RETRY),
  removeOnComplete: true,
  removeOnFail: { age: 7 * 86_400 },
} as const;

export class BullListQueue implements ListQueue {
  /** The BullMQ queue, opened at the first add on a ready connection; forgotten if its opening failed. */
  private producer: Promise<DurableQueue> | undefined;

  /** On a connection it is given (closed by its owner), under the queue's own hash tag (bullPrefix). */
  constructor(
    private readonly connection: Redis,
    private readonly redisPrefix: string,
    private readonly logger?: Logger,
  ) {}

  /**
   * BullMQ asks the server for its version once, as a queue opens, and a queue whose asking failed
   * refuses every job from then on. On a Cluster it takes the connection's `connect` state (slots
   * known, ready check under way) for ready, where our connections, with no offline queue, refuse
   * commands: a list queue opened there (the gateway's, right after its transport was up) never
   * queued a list again, and every list waited for the janitor's 30 s, `queued`. So the queue is
   * opened only on a ready connection, and opened anew after a failed opening.
   */
  private open(): Promise<DurableQueue> {
    if (this.producer !== undefined) return this.producer;
    if (this.connection.status !== 'ready')
      return Promise.reject(new Error(`the list queue's Redis connection is not ready (${this.connection.status})`));
    const producer = openQueue(LIST_QUEUE, {
      connection: this.connection,
      redisPrefix: this.redisPrefix,
      ...(this.logger === undefined ? {} : { logger: this.logger }),
    });
    const opened = producer.queue.waitUntilReady().then(
      () => producer,
      async (error: unknown) => {
        this.producer = undefined;
        await producer.close();
        throw error;
      },
    );
    this.producer = opened;
    return opened;
  }

  async add(jobs: QueuedListJob[]): Promise<void> {
    const producer = await this.open();
    for (let start = 0; start < jobs.length; start += 500) {
      await producer.queue.addBulk(
        jobs.slice(start, start + 500).map(({ job, delayMs }) => ({
          name: job.kind,
          data: job,
          opts: {
            ...JOB_OPTIONS,
            jobId: listJobId(job),
            priority: listJobPriority(job),
            ...(delayMs === undefined ? {} : { delay: Math.max(0, delayMs) }),
          },
        })),
      );
    }
  }

  async close(): Promise<void> {
    const producer = await this.producer?.catch(() => undefined);
    await producer?.close();
  }
}

export interface ListWorkerOptions {
  redis: RedisTarget;
  redisPrefix: string;
  concurrency: number;
  /** A job's lock: a crashed worker's job is taken up by another one after it lapses. */
  lockDurationMs?: number;
  /** A job that will not run again (every attempt failed, or it stalled too often). */
  onFailed: (job: ListJob, error: Error) => Promise<void> | void;
  logger?: Logger;
}

/** Consumes `verify-list` jobs with `processor`. */
export function startListWorker(processor: ListJobProcessor, options: ListWorkerOptions): Worker {
  const lockDuration = options.lockDurationMs ?? 10_000;
  return startWorker(
    async (job: Job, _token?: string, signal?: AbortSignal) =>
      processor(listJobSchema.parse(job.data), signal ?? new AbortController().signal),
    {
      queue: LIST_QUEUE,
      redis: options.redis,
      redisPrefix: options.redisPrefix,
      concurrency: options.concurrency,
      lockDurationMs: lockDuration,
      stalledIntervalMs: Math.max(500, Math.floor(lockDuration / 2)),
      // A job is idempotent, so taking one up again after crashes is safe; only a job that
      // crashes every worker it meets is given up.
      maxStalledCount: 5,
      retry: LIST_RETRY,
      connectionName: 'worker-lists',
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      onFinalFailure: async (job, error) => {
        const parsed = listJobSchema.safeParse(job.data);
        if (parsed.success) await options.onFailed(parsed.data, error);
      },
    },
  );
}
