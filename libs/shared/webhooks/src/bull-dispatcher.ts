/**
 * Distributed mode's dispatcher: each event is a job on the BullMQ queue `callbacks`, with the
 * event id as job id (enqueueing the same event twice stores it once). A failed attempt is moved
 * to BullMQ's delayed set with the schedule's delay in the same Redis script that ends the
 * attempt, so there is no moment where the event exists nowhere: a consumer killed mid-attempt
 * leaves its job locked until the lock expires, then BullMQ's stalled-job check hands it to the
 * next consumer. The retry window is measured from `enqueuedAt`, stored with the job.
 */
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { z } from 'zod';
import { bullPrefix } from '@svc/jobs/bullmq';
import { createRedis, waitForRedis, type Redis, type RedisTarget } from '@svc/jobs/redis';
import type { Logger } from '@svc/telemetry';
import { attemptDelivery, type AttemptContext } from './attempt.ts';
import type { DeliveryOptions } from './deliver.ts';
import type { CallbackDispatcher } from './dispatcher.ts';
import { callbackEventSchema, type CallbackEvent } from './events.ts';
import { retryDelayMs, retrySchedule, type RetrySchedule } from './schedule.ts';
import { WebhookSecretStore, type SecretSource } from './secrets.ts';

export const CALLBACK_QUEUE = 'callbacks';
const BACKOFF_TYPE = 'callback-schedule';
/** Time ends the retries (see schedule.ts); this only bounds a runaway schedule. */
const ATTEMPTS_CEILING = 100_000;
/** Delivered events stay a day, so a late duplicate enqueue of the same id is still a no-op. */
const REMOVE_ON_COMPLETE = { age: 24 * 3_600, count: 100_000 } as const;
/** Events given up on stay a week for an operator to look at (`failedReason`). */
const REMOVE_ON_FAIL = { age: 7 * 24 * 3_600, count: 100_000 } as const;
/** How long an enqueue waits for a connection still being made (at start-up) before it fails. */
const CONNECT_WAIT_MS = 2_000;
/** A job whose consumer died this many times is failed by BullMQ: far above any real crash loop. */
const MAX_STALLED_COUNT = 20;

const jobDataSchema = z.object({ event: callbackEventSchema, enqueuedAt: z.number().int().positive() });
type CallbackJobData = z.infer<typeof jobDataSchema>;

export interface BullCallbackDispatcherOptions {
  redis: RedisTarget;
  redisPrefix: string;
}

/**
 * The producer side. Its Redis connection fails fast like the gateway's: `enqueue` resolves only
 * once the job is in Redis and rejects at once when Redis is unreachable, so the caller knows
 * whether the event is stored.
 */
export function createBullCallbackDispatcher(options: BullCallbackDispatcherOptions): CallbackDispatcher {
  const connection = createRedis(options.redis, 'background', 'callbacks-dispatcher');
  const queue = new Queue<CallbackJobData>(CALLBACK_QUEUE, { connection, prefix: bullPrefix(options.redisPrefix, CALLBACK_QUEUE) });
  queue.on('error', () => undefined);
  return {
    async enqueue(event: CallbackEvent): Promise<void> {
      const parsed = callbackEventSchema.parse(event);
      await waitForRedis(connection, CONNECT_WAIT_MS);
      await queue.add(
        parsed.type,
        { event: parsed, enqueuedAt: Date.now() },
        {
          jobId: parsed.id,
          attempts: ATTEMPTS_CEILING,
          backoff: { type: BACKOFF_TYPE },
          removeOnComplete: REMOVE_ON_COMPLETE,
          removeOnFail: REMOVE_ON_FAIL,
        },
      );
    },
    async close(): Promise<void> {
      await queue.close().catch(() => undefined);
      await connection.quit().catch(() => undefined);
      connection.disconnect();
    },
  };
}

/** Thrown by the processor after a failed attempt: BullMQ's backoff strategy reads the delay from it. */
class RetryLater extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
    this.name = 'RetryLater';
  }
}

export interface CallbackConsumerOptions {
  redis: RedisTarget;
  redisPrefix: string;
  /** LIST_ALLOW_PRIVATE_CALLBACKS. */
  allowPrivate: boolean;
  logger: Logger;
  /** Default: the key's secret from Redis (WebhookSecretStore), read at every attempt. */
  secrets?: SecretSource;
  schedule?: Partial<RetrySchedule>;
  /** Attempts in flight at once (default 8; each lasts at most the attempt deadline). */
  concurrency?: number;
  /** Deadline of one attempt (default 10 s), and test hooks: resolver, extra CA. */
  delivery?: Omit<DeliveryOptions, 'allowPrivate' | 'signal'>;
  /** How long a dead consumer's job stays locked before another takes it (default 30 s). */
  lockDurationMs?: number;
}

export interface CallbackConsumer {
  worker: Worker;
  close(): Promise<void>;
}

/** The consumer side, run by a worker process (the verify-worker): delivers and retries. */
export function startCallbackConsumer(options: CallbackConsumerOptions): CallbackConsumer {
  const schedule = retrySchedule(options.schedule);
  const connection = createRedis(options.redis, 'blocking', 'callbacks-consumer');
  let secretsRedis: Redis | undefined;
  let secrets = options.secrets;
  if (secrets === undefined) {
    secretsRedis = createRedis(options.redis, 'background', 'callbacks-secrets');
    secrets = new WebhookSecretStore(secretsRedis, options.redisPrefix).source;
  }
  const context: AttemptContext = {
    secrets,
    schedule,
    logger: options.logger,
    delivery: { ...options.delivery, allowPrivate: options.allowPrivate },
  };
  const lockDuration = options.lockDurationMs ?? 30_000;

  const worker = new Worker(
    CALLBACK_QUEUE,
    async (job: Job<unknown>) => {
      const data = jobDataSchema.safeParse(job.data);
      if (!data.success) {
        options.logger.error({ jobId: job.id }, 'malformed callback job dropped');
        throw new UnrecoverableError('malformed callback job');
      }
      const result = await attemptDelivery(data.data.event, job.attemptsMade + 1, data.data.enqueuedAt, context);
      if (result.outcome === 'delivered') return { status: result.status, attempts: job.attemptsMade + 1 };
      if (result.outcome === 'retry') throw new RetryLater(result.reason, result.delayMs);
      throw new UnrecoverableError(result.reason);
    },
    {
      connection,
      prefix: bullPrefix(options.redisPrefix, CALLBACK_QUEUE),
      concurrency: options.concurrency ?? 8,
      lockDuration,
      stalledInterval: Math.max(500, Math.floor(lockDuration / 2)),
      maxStalledCount: MAX_STALLED_COUNT,
      settings: {
        // Anything but RetryLater is an error of ours, not of the receiver: retried on the schedule too.
        backoffStrategy: (attemptsMade, _type, error) =>
          error instanceof RetryLater ? error.delayMs : retryDelayMs(schedule, attemptsMade),
      },
    },
  );
  worker.on('error', (error) => options.logger.warn({ err: error }, 'callback consumer: Redis error'));
  worker.on('stalled', (jobId) => options.logger.warn({ eventId: jobId }, 'callback attempt interrupted (its consumer died): tried again'));

  let closing: Promise<void> | undefined;
  return {
    worker,
    close: () =>
      (closing ??= (async () => {
        // Waits for attempts in flight (each bounded by its deadline); their jobs stay in Redis.
        await worker.close().catch(() => undefined);
        await Promise.allSettled([connection.quit(), ...(secretsRedis === undefined ? [] : [secretsRedis.quit()])]);
        connection.disconnect();
        secretsRedis?.disconnect();
      })()),
  };
}
