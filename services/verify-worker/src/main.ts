/** The distributed verify worker: runs `verify` jobs and list work (`verify-list`) from BullMQ, and delivers list callbacks. */
import { createBackend } from '@svc/backend';
import { loadConfig } from '@svc/config';
import { exitOnSignals } from '@svc/jobs';
import { createLogger, createRegistry } from '@svc/telemetry';
import { JANITOR_INTERVAL_MS } from './lists/assemble.ts';
import { createVerifyWork } from './worker-parts.ts';

const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL, 'verify-worker', undefined, config.LOG_ERROR_WINDOW_MS);
const registry = createRegistry({ service: 'verify-worker' });
if (config.redis === undefined) {
  logger.fatal(
    'REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS is required for a verify-worker (embedded mode runs it inside `npm start`).',
  );
  process.exit(1);
}
const backend = await createBackend(config, { process: 'verify-worker', logger });
const work = createVerifyWork(backend, { registry, logger });
// The list worker first: the worker process counts it as its own (health, queue depth, shutdown).
backend.workLists(work.lists, { janitorIntervalMs: JANITOR_INTERVAL_MS });
await backend.serve([work.handler], {
  service: 'verify-worker',
  concurrency: config.VERIFY_WORKER_CONCURRENCY,
  registry,
  logger,
  readiness: work.readiness,
});
// A list's end is handed to the callbacks queue; this process also delivers from it.
backend.deliverCallbacks();
exitOnSignals(
  async () => {
    await backend.close();
    work.close();
  },
  logger,
  config.SHUTDOWN_GRACE_MS,
);
