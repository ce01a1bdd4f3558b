/**
 * Distributed mode's list queue on BullMQ (queue `verify-list`, beside the request/response
 * queues). BullMQ gives what a list's work needs to survive any process: jobs kept in Redis,
 * priorities, delayed jobs for retries, and a lock per running job whose expiry hands the job of
 * a crashed worker to another one. The job handler is idempotent (see the store), so a job run
 * twice records nothing twice.
 */
import { Queue, Worker, type Job } from 'bullmq';
import { bullPrefix } from '@svc/jobs/bullmq';
import { createRedis, type Redis, type RedisTarget } from '@svc/jobs/redis';
import {
  LIST_QUEUE,
  listJobId,
  listJobPriority,
  listJobSchema,
  type ListJob,
  type ListJobProcessor,
  type ListQueue,
  type QueuedListJob,
} from './queue.ts';

const ATTEMPTS = 8;
const JOB_OPTIONS = {
  attempts: ATTEMPTS,
  backoff: { type: 'exponential', delay: 2_000 },
  removeOnComplete: true,
  removeOnFail: { age: 7 * 86_400 },
} as const;

export class BullListQueue implements ListQueue {
  private readonly queue: Queue;

  constructor(connection: Redis, redisPrefix: string) {
    this.queue = new Queue(LIST_QUEUE, { connection, prefix: bullPrefix(redisPrefix, LIST_QUEUE) });
    this.queue.on('error', () => undefined);
  }

  async add(jobs: QueuedListJob[]): Promise<void> {
    for (let start = 0; start < jobs.length; start += 500) {
      await this.queue.addBulk(
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
    return this.queue.close();
  }
}

export interface ListWorkerOptions {
  redis: RedisTarget;
  redisPrefix: string;
  concurrency: number;
  /** A job's lock: a crashed worker's job is taken up by another one after it lapses. */
  lockDurationMs?: number;
  /** A job that kept failing (every attempt, or stalled too often). */
  onFailed: (job: ListJob, error: Error) => void;
}

/** Consumes `verify-list` jobs with `processor`. */
export function startListWorker(processor: ListJobProcessor, options: ListWorkerOptions): Worker {
  const connection = createRedis(options.redis, 'blocking', 'worker-lists');
  const lockDuration = options.lockDurationMs ?? 10_000;
  const worker = new Worker(
    LIST_QUEUE,
    async (job: Job, _token?: string, signal?: AbortSignal) =>
      processor(listJobSchema.parse(job.data), signal ?? new AbortController().signal),
    {
      connection,
      prefix: bullPrefix(options.redisPrefix, LIST_QUEUE),
      concurrency: options.concurrency,
      lockDuration,
      stalledInterval: Math.max(500, Math.floor(lockDuration / 2)),
      // A job is idempotent, so taking one up again after crashes is safe; only a job that
      // crashes every worker it meets is given up.
      maxStalledCount: 5,
    },
  );
  worker.on('error', () => undefined);
  worker.on('failed', (job, error) => {
    if (job === undefined) return;
    const parsed = listJobSchema.safeParse(job.data);
    const finalAttempt = job.attemptsMade >= (job.opts.attempts ?? 1) || /stalled/i.test(error.message);
    if (parsed.success && finalAttempt) options.onFailed(parsed.data, error);
  });
  worker.on('closed', () => void connection.quit().catch(() => undefined));
  return worker;
}
