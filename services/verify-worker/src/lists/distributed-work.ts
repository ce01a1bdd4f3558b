/** Distributed mode's list work: the `verify-list` queue on BullMQ, the list store and meter in Redis. */
import type { Config } from '@svc/config';
import type { Redis } from '@svc/jobs/redis';
import type { Worker } from '@svc/jobs/bullmq';
import { BullListQueue, startListWorker } from '@svc/lists/bullmq';
import type { ListProcessor } from '@svc/lists/processor';
import { RedisListStore } from '@svc/lists/redis';
import { RedisMeter } from '@svc/metering';
import type { Logger } from '@svc/telemetry';
import type { CallbackDispatcher } from '@svc/webhooks';
import type { Registry } from 'prom-client';
import type { SessionLimiter } from '../engine/host-limiter.ts';
import { JANITOR_INTERVAL_MS, createListProcessor } from './assemble.ts';

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
  if (config.redis === undefined)
    throw new Error('A Redis (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS) is required for distributed list work.');
  const queue = new BullListQueue(redis, config.REDIS_PREFIX, options.logger);
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
    redis: config.redis,
    redisPrefix: config.REDIS_PREFIX,
    concurrency: config.LIST_WORKER_CONCURRENCY,
    ...(options.lockDurationMs === undefined ? {} : { lockDurationMs: options.lockDurationMs }),
    // A rejection is logged by the queue layer (rate-limited), not dropped.
    onFailed: (job, error) => processor.failJob(job, error),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
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
