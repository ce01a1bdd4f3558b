/**
 * Distributed mode's dispatcher: each event is a job on the BullMQ queue `callbacks`, with the
 * event id as job id (enqueueing the same event twice stores it once). A failed attempt is moved
 * to BullMQ's delayed set with the schedule's delay in the same Redis script that ends the
 * attempt, so there is no moment where the event exists nowhere: a consumer killed mid-attempt
 * leaves its job locked until the lock expires, then BullMQ's stalled-job check hands it to the
 * next consumer. The retry window is measured from `enqueuedAt`, stored with the job.
 * Connections, errors, retries and close are the durable-queue layer's (`@svc/jobs/bullmq`).
 */
import { UnrecoverableError } from 'bullmq';
import { z } from 'zod';
import {
  closeConnections,
  ReadyQueue,
  queueConnection,
  retryJobOptions,
  startWorker,
  type Job,
  type RetryPolicy,
  type Worker,
} from '@svc/jobs/bullmq';
import { waitForRedis, type Redis, type RedisTarget } from '@svc/jobs/redis';
import type { Logger } from '@svc/telemetry';
import { attemptDelivery, type AttemptContext } from './attempt.ts';
import type { DeliveryOptions } from './deliver.ts';
import type { CallbackDispatcher } from './dispatcher.ts';
import { callbackEventSchema, type CallbackEvent } from './events.ts';
import { retryDelayMs, retrySchedule, type RetrySchedule } from './schedule.ts';
import { WebhookSecretStore, type SecretSource } from './secrets.ts';

export const CALLBACK_QUEUE = 'callbacks';
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
  /** Where its Redis and queue errors go (rate-limited); the queue layer's own logger without. */
  logger?: Logger;
}

/**
 * The producer side. Its Redis connection fails fast like the gateway's: `enqueue` resolves only
 * once the job is in Redis and rejects at once when Redis is unreachable, so the caller knows
 * whether the event is stored.
 */
export function createBullCallbackDispatcher(options: BullCallbackDispatcherOptions): CallbackDispatcher {
  const connection = queueConnection(options.redis, 'background', 'callbacks-dispatcher', options.logger);
  // Opened once the connection is ready (ReadyQueue: a queue opened in a Cluster's start-up gap refuses every job).
  const producer = new ReadyQueue(CALLBACK_QUEUE, {
    connection,
    redisPrefix: options.redisPrefix,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  // The schedule's delays are the consumer's (its backoff strategy); only the ceiling travels here.
  const jobOptions = {
    ...retryJobOptions(callbackRetry(retrySchedule())),
    removeOnComplete: REMOVE_ON_COMPLETE,
    removeOnFail: REMOVE_ON_FAIL,
  };
  return {
    async enqueue(event: CallbackEvent): Promise<void> {
      const parsed = callbackEventSchema.parse(event);
      await waitForRedis(connection, CONNECT_WAIT_MS);
      const { queue } = await producer.open();
      const data: CallbackJobData = { event: parsed, enqueuedAt: Date.now() };
      await queue.add(parsed.type, data, { ...jobOptions, jobId: parsed.id });
    },
    async close(): Promise<void> {
      await producer.close();
      await closeConnections([connection]);
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

/**
 * Retries of a callback: the receiver's answer sets the wait (RetryLater, from the schedule and
 * its Retry-After); anything else is an error of ours, not of the receiver, retried on the
 * schedule too. Time, not a count, ends them (attemptDelivery gives up past the window).
 */
const callbackRetry = (schedule: RetrySchedule): RetryPolicy => ({
  attempts: ATTEMPTS_CEILING,
  delayMs: (attemptsMade, error) => (error instanceof RetryLater ? error.delayMs : retryDelayMs(schedule, attemptsMade)),
});

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
  let secretsRedis: Redis | undefined;
  let secrets = options.secrets;
  if (secrets === undefined) {
    secretsRedis = queueConnection(options.redis, 'background', 'callbacks-secrets', options.logger);
    secrets = new WebhookSecretStore(secretsRedis, options.redisPrefix).source;
  }
  const context: AttemptContext = {
    secrets,
    schedule,
    logger: options.logger,
    delivery: { ...options.delivery, allowPrivate: options.allowPrivate },
  };
  const lockDuration = options.lockDurationMs ?? 30_000;

  const worker = startWorker(
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
      queue: CALLBACK_QUEUE,
      redis: options.redis,
      redisPrefix: options.redisPrefix,
      concurrency: options.concurrency ?? 8,
      lockDurationMs: lockDuration,
      stalledIntervalMs: Math.max(500, Math.floor(lockDuration / 2)),
      maxStalledCount: MAX_STALLED_COUNT,
      retry: callbackRetry(schedule),
      connectionName: 'callbacks-consumer',
      logger: options.logger,
    },
  );
  worker.on('stalled', (jobId) => options.logger.warn({ eventId: jobId }, 'callback attempt interrupted (its consumer died): tried again'));

  let closing: Promise<void> | undefined;
  return {
    worker,
    close: () =>
      (closing ??= (async () => {
        // Waits for attempts in flight (each bounded by its deadline); their jobs stay in Redis.
        // The worker's own connection is closed by the queue layer when it closes.
        await worker.close().catch((error: Error) => options.logger.warn({ err: error }, 'callback consumer did not close cleanly'));
        await closeConnections(secretsRedis === undefined ? [] : [secretsRedis]);
      })()),
  };
}
