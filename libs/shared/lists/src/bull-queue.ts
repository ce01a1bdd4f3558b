/**
 * Distributed mode's list queue on BullMQ (queue `verify-list`, beside the request/response
 * queues). BullMQ gives what a list's work needs to survive any process: jobs kept in Redis,
 * priorities, delayed jobs for retries, and a lock per running job whose expiry hands the job of
 * a crashed worker to another one. The job handler is idempotent (see the store), so a job run
 * twice records nothing twice. Connections, errors, retries and close are the durable-queue
 * layer's (`@svc/jobs/bullmq`).
 */
import { ReadyQueue, retryJobOptions, startWorker, type Job, type Worker } from '@svc/jobs/bullmq';
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
  /** Opened at the first add on a ready connection (see ReadyQueue: a Cluster's start-up gap). */
  private readonly producer: ReadyQueue;

  /** On a connection it is given (closed by its owner), under the queue's own hash tag (bullPrefix). */
  constructor(connection: Redis, redisPrefix: string, logger?: Logger) {
    this.producer = new ReadyQueue(LIST_QUEUE, { connection, redisPrefix, ...(logger === undefined ? {} : { logger }) });
  }

  async add(jobs: QueuedListJob[]): Promise<void> {
    const producer = await this.producer.open();
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

  close(): Promise<void> {
    return this.producer.close();
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
