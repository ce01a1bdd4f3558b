/** The distributed verify worker: runs `verify` jobs from BullMQ. */
import { loadConfig } from '@svc/config';
import { createRedis } from '@svc/jobs/redis';
import { exitOnSignals, runWorkerProcess } from '@svc/jobs/worker';
import { createLogger, createRegistry } from '@svc/telemetry';
import { createVerifyHandler } from './handler.ts';

const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL, 'verify-worker');
const registry = createRegistry({ service: 'verify-worker' });
const cacheRedis = createRedis(config.REDIS_URL ?? 'redis://127.0.0.1:6379', 'request', 'verify-cache');
const worker = await runWorkerProcess({
  config,
  handlers: [createVerifyHandler({ config, registry, redis: cacheRedis })],
  concurrency: config.VERIFY_WORKER_CONCURRENCY,
  registry,
  logger,
});
exitOnSignals(async () => {
  await worker.close();
  cacheRedis.disconnect();
}, logger);
