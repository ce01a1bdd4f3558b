/**
 * A verify-worker's list work assembled from configuration: the engine at list priority (sharing
 * session slots with the batch route, batches first), the store, queue and meter of the mode.
 */
import type { Config } from '@svc/config';
import type { Redis } from '@svc/jobs/redis';
import type { ListQueue, ListStore } from '@svc/lists';
import type { CallbackDispatcher } from '@svc/webhooks';
import { BullListQueue, startListWorker } from '@svc/lists/bullmq';
import { RedisListStore } from '@svc/lists/redis';
import { RedisMeter, type Meter } from '@svc/metering';
import type { Logger } from '@svc/telemetry';
import type { Worker } from '@svc/jobs/bullmq';
import type { Registry } from 'prom-client';
import type { SessionLimiter } from '../engine/host-limiter.ts';
import { createVerifier } from '../handler.ts';
import { isEnded } from '@svc/contracts';
import { ListProcessor, gatedByList } from './processor.ts';

const JANITOR_INTERVAL_MS = 30_000;

export interface ListWorkParts {
  config: Config;
  store: ListStore;
  queue: ListQueue;
  meter: Meter;
  /** The list view of the session limiter shared with the batch route. */
  limiter: SessionLimiter;
  dispatcher?: CallbackDispatcher;
  registry?: Registry;
  redis?: Redis;
  logger?: Logger;
}

export function createListProcessor(parts: ListWorkParts): ListProcessor {
  const { config } = parts;
  const verifier = createVerifier({
    config,
    ...(parts.registry === undefined ? {} : { registry: parts.registry }),
    ...(parts.redis === undefined ? {} : { redis: parts.redis }),
    limiter: gatedByList(parts.limiter, async (listId) => {
      const record = await parts.store.get(listId);
      return record !== undefined && !isEnded(record.status);
    }),
  });
  return new ListProcessor({
    store: parts.store,
    queue: parts.queue,
    meter: parts.meter,
    verify: (emails, options) => verifier.verifyDetailed(emails, options),
    ...(parts.dispatcher === undefined ? {} : { dispatcher: parts.dispatcher }),
    retryDelaysS: config.LIST_RETRY_DELAYS_S,
    retentionMs: config.LIST_RETENTION_DAYS * 86_400_000,
    chunkDeadlineMs: config.VERIFY_BATCH_DEADLINE_MS,
    ...(parts.logger === undefined ? {} : { logger: parts.logger }),
  });
}

export interface DistributedListWork {
  worker: Worker;
  processor: ListProcessor;
  close(): Promise<void>;
}

/** Distributed mode: consume the `verify-list` queue, with the janitor running beside it. */
export function startDistributedListWork(options: {
  config: Config;
  redis: Redis;
  limiter: SessionLimiter;
  dispatcher?: CallbackDispatcher;
  registry?: Registry;
  logger?: Logger;
  lockDurationMs?: number;
  janitorIntervalMs?: number;
}): DistributedListWork {
  const { config, redis } = options;
  if (config.REDIS_URL === undefined) throw new Error('REDIS_URL is required for distributed list work.');
  const queue = new BullListQueue(redis, config.REDIS_PREFIX);
  const processor = createListProcessor({
    config,
    store: new RedisListStore(redis, config.REDIS_PREFIX),
    queue,
    meter: new RedisMeter(redis, config.REDIS_PREFIX),
    limiter: options.limiter,
    redis,
    ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
    ...(options.registry === undefined ? {} : { registry: options.registry }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  const worker = startListWorker(processor.handle, {
    url: config.REDIS_URL,
    redisPrefix: config.REDIS_PREFIX,
    concurrency: config.LIST_WORKER_CONCURRENCY,
    ...(options.lockDurationMs === undefined ? {} : { lockDurationMs: options.lockDurationMs }),
    onFailed: (job, error) => void processor.failJob(job, error).catch(() => undefined),
  });
  const stopJanitor = processor.startJanitor(options.janitorIntervalMs ?? JANITOR_INTERVAL_MS);
  return {
    worker,
    processor,
    close: async () => {
      stopJanitor();
      await worker.close();
      await queue.close();
    },
  };
}
