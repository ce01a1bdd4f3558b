/** The distributed QR worker: renders `qr` jobs from BullMQ. */
import { createBackend } from '@svc/backend';
import { loadConfig } from '@svc/config';
import { exitOnSignals } from '@svc/jobs';
import { createLogger, createRegistry } from '@svc/telemetry';
import { qrJobHandler } from './index.ts';

const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL, 'qr-worker', undefined, config.LOG_ERROR_WINDOW_MS);
const backend = await createBackend(config, { process: 'qr-worker', logger });
await backend.serve([qrJobHandler], {
  service: 'qr-worker',
  concurrency: config.QR_WORKER_CONCURRENCY,
  registry: createRegistry({ service: 'qr-worker' }),
  logger,
});
exitOnSignals(backend.close, logger, config.SHUTDOWN_GRACE_MS);
