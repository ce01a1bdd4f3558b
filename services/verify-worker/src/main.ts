/** The distributed verify worker: runs `verify` jobs and list work (`verify-list`) from BullMQ. */
import { loadConfig } from '@svc/config';
import { createRedis } from '@svc/jobs/redis';
import { exitOnSignals } from '@svc/jobs';
import { runWorkerProcess } from '@svc/jobs/worker';
import { createLogger, createRegistry } from '@svc/telemetry';
import { RedisHostLimiter } from './engine/shared-host-limiter.ts';
import { createVerifyHandler } from './handler.ts';
import { startDistributedListWork } from './lists/distributed-work.ts';
import { createBullCallbackDispatcher, startCallbackConsumer } from '@svc/webhooks/bullmq';

const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL, 'verify-worker');
const registry = createRegistry({ service: 'verify-worker' });
const redisUrl = config.REDIS_URL ?? 'redis://127.0.0.1:6379';
const cacheRedis = createRedis(redisUrl, 'request', 'verify-cache');
// Sessions per mail server counted across every worker of the deployment, batches first.
const limiter = new RedisHostLimiter({
  redis: cacheRedis,
  prefix: config.REDIS_PREFIX,
  perHost: config.VERIFY_MAX_CONNECTIONS_PER_HOST,
  onFallback: (error) => logger.warn({ err: error }, 'session slots unreachable in Redis; counting in this process'),
});
// A list's end is handed to the callbacks queue; this process also delivers from it, signed with
// each key's webhook secret, retried for 24 h.
const dispatcher = createBullCallbackDispatcher({ url: redisUrl, redisPrefix: config.REDIS_PREFIX });
const lists = startDistributedListWork({ config, redis: cacheRedis, limiter: limiter.for('list'), registry, logger, dispatcher });
const worker = await runWorkerProcess({
  config,
  handlers: [createVerifyHandler({ config, registry, redis: cacheRedis, limiter: limiter.for('batch'), logger })],
  concurrency: config.VERIFY_WORKER_CONCURRENCY,
  registry,
  logger,
  extraWorkers: [lists.worker],
});
const callbacks = startCallbackConsumer({
  url: redisUrl,
  redisPrefix: config.REDIS_PREFIX,
  allowPrivate: config.LIST_ALLOW_PRIVATE_CALLBACKS,
  logger,
});
exitOnSignals(async () => {
  await lists.close();
  await Promise.all([worker.close(), callbacks.close()]);
  await dispatcher.close();
  cacheRedis.disconnect();
}, logger);
