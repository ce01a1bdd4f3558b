/** The distributed verify worker: runs `verify` jobs and list work (`verify-list`) from BullMQ. */
import { loadConfig } from '@svc/config';
import { queueConnection } from '@svc/jobs/bullmq';
import { exitOnSignals } from '@svc/jobs';
import { runWorkerProcess } from '@svc/jobs/worker';
import { Counter, Gauge } from 'prom-client';
import { createLogger, createRegistry, errorKind, errorLog } from '@svc/telemetry';
import { RedisHostLimiter } from './engine/shared-host-limiter.ts';
import { createVerifyHandler } from './handler.ts';
import { startDistributedListWork } from './lists/distributed-work.ts';
import { createBullCallbackDispatcher, startCallbackConsumer } from '@svc/webhooks/bullmq';

const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL, 'verify-worker');
const registry = createRegistry({ service: 'verify-worker' });
if (config.redis === undefined) {
  logger.fatal(
    'REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS is required for a verify-worker (embedded mode runs it inside `npm start`).',
  );
  process.exit(1);
}
const redis = config.redis;
const cacheRedis = queueConnection(redis, 'background', 'verify-cache', logger);
const limiterUnavailable = new Counter({
  name: 'verify_session_limiter_unavailable_total',
  help: 'Attempts to take an SMTP session slot that could not reach the shared counts in Redis',
  registers: [registry],
});
// Sessions per mail server counted across every worker of the deployment, batches first.
const limiter = new RedisHostLimiter({
  redis: cacheRedis,
  prefix: config.REDIS_PREFIX,
  perHost: config.VERIFY_MAX_CONNECTIONS_PER_HOST,
  // Loud, not a quiet fallback: sessions wait for the shared counts rather than multiply the limit.
  // Through the process's error log: while Redis is out every waiting session reports, once per kind per 10 s.
  onUnavailable: (error) => {
    limiterUnavailable.inc();
    errorLog(logger)(
      'error',
      `smtp-session-limiter:${errorKind(error)}`,
      { component: 'smtp-session-limiter', err: error },
      'SMTP session limits unreachable in Redis: sessions wait',
    );
  },
});
new Gauge({
  name: 'verify_session_limiter_available',
  help: '1 while the shared per-mail-server session counts in Redis answer, 0 while sessions wait for them',
  registers: [registry],
  collect() {
    this.set(limiter.available ? 1 : 0);
  },
});
// A list's end is handed to the callbacks queue; this process also delivers from it, signed with
// each key's webhook secret, retried for 24 h.
const dispatcher = createBullCallbackDispatcher({ redis, redisPrefix: config.REDIS_PREFIX, logger });
const lists = startDistributedListWork({ config, redis: cacheRedis, limiter: limiter.for('list'), registry, logger, dispatcher });
const worker = await runWorkerProcess({
  service: 'verify-worker',
  config,
  handlers: [createVerifyHandler({ config, registry, redis: cacheRedis, limiter: limiter.for('batch'), logger })],
  concurrency: config.VERIFY_WORKER_CONCURRENCY,
  registry,
  logger,
  extraWorkers: [lists.worker],
  readiness: () => Promise.resolve(limiter.available ? undefined : 'SMTP session limits in Redis are unreachable: sessions wait for them.'),
});
const callbacks = startCallbackConsumer({
  redis,
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
