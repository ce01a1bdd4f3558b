/** The distributed QR worker: renders `qr` jobs from BullMQ. */
import { loadConfig } from '@svc/config';
import { exitOnSignals } from '@svc/jobs';
import { runWorkerProcess } from '@svc/jobs/worker';
import { createLogger, createRegistry } from '@svc/telemetry';
import { qrJobHandler } from './index.ts';

const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL, 'qr-worker');
const worker = await runWorkerProcess({
  service: 'qr-worker',
  config,
  handlers: [qrJobHandler],
  concurrency: config.QR_WORKER_CONCURRENCY,
  registry: createRegistry({ service: 'qr-worker' }),
  logger,
});
exitOnSignals(worker.close, logger);
