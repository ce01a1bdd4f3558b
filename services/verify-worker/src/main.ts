/** The distributed verify worker: runs `verify` jobs and list work (`verify-list`) from BullMQ. */
import { loadConfig } from '@svc/config';
import { createRedis } from '@svc/jobs/redis';
import { exitOnSignals, runWorkerProcess } from '@svc/jobs/worker';
import { createLogger, createRegistry } from '@svc/telemetry';
import { RedisHostLimiter } from './engine/shared-host-limiter.ts';
import { createVerifyHandler } from './handler.ts';
import { startDistributedListWork } from './lists/assemble.ts';

const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL, 'verify-worker');
const registry = createRegistry({ service: 'verify-worker' });
const cacheRedis = createRedis(config.REDIS_URL ?? 'redis://127.0.0.1:6379', 'request', 'verify-cache');
// Sessions per mail server counted across every worker of the deployment, batches first.
const limiter = new RedisHostLimiter({
  redis: cacheRedis,
  prefix: config.REDIS_PREFIX,
  perHost: config.VERIFY_MAX_CONNECTIONS_PER_HOST,
  onFallback: (error) => logger.warn({ err: error }, 'session slots unreachable in Redis; counting in this process'),
});
// Callback delivery (@svc/webhooks) is wired here when that package is merged.
const lists = startDistributedListWork({ config, redis: cacheRedis, limiter: limiter.for('list'), registry, logger });
const worker = await runWorkerProcess({
  config,
  handlers: [createVerifyHandler({ config, registry, redis: cacheRedis, limiter: limiter.for('batch') })],
  concurrency: config.VERIFY_WORKER_CONCURRENCY,
  registry,
  logger,
  extraWorkers: [lists.worker],
});
exitOnSignals(async () => {
  await lists.close();
  await worker.close();
  cacheRedis.disconnect();
}, logger);
