/**
 * What every worker process does besides its own jobs: run BullMQ workers for its handlers,
 * serve /healthz and /metrics on a small port, publish queue depth from BullMQ's own counts, and
 * shut down gracefully (SIGTERM: finish or hand back active jobs, then quit; a second signal
 * exits at once).
 */
import { createServer, type Server } from 'node:http';
import { Queue, type Worker } from 'bullmq';
import type { Registry } from 'prom-client';
import type { Config } from '@svc/config';
import { bullPrefix, reportErrors, startBullWorker } from './bullmq.ts';
import type { RegisteredHandler } from './transport.ts';
import { createWorkerMetrics, rateLimitedLog, type Logger } from '@svc/telemetry';
import { createRedis } from './redis.ts';

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed'] as const;

export interface WorkerProcessOptions {
  config: Config;
  handlers: RegisteredHandler[];
  concurrency: number;
  registry: Registry;
  logger: Logger;
}

export interface WorkerProcess {
  workers: Worker[];
  server: Server;
  close: () => Promise<void>;
}

export async function runWorkerProcess(options: WorkerProcessOptions): Promise<WorkerProcess> {
  const { config, registry, logger } = options;
  if (config.REDIS_URL === undefined)
    throw new Error('REDIS_URL is required for a worker process (embedded mode runs workers inside `npm start`).');
  const url = config.REDIS_URL;
  const metrics = createWorkerMetrics(registry);
  const report = rateLimitedLog(logger);
  const workers = options.handlers.map((handler) => {
    const worker = startBullWorker(handler, {
      url,
      redisPrefix: config.REDIS_PREFIX,
      concurrency: options.concurrency,
      logger,
      onJobDone: (queue, outcome, seconds) => metrics.jobDuration.observe({ queue, outcome }, seconds),
    });
    worker.on('active', () => metrics.activeJobs.inc({ queue: handler.kind.name }));
    const done = () => metrics.activeJobs.dec({ queue: handler.kind.name });
    worker.on('completed', done);
    worker.on('failed', (job) => {
      if (job !== undefined) done();
    });
    return worker;
  });

  // Queue depth is read at scrape time, so an idle worker costs Redis nothing between scrapes.
  const countsClient = createRedis(url, 'request', 'worker-metrics', report);
  const queues = options.handlers.map(
    (handler) => new Queue(handler.kind.name, { connection: countsClient, prefix: bullPrefix(config.REDIS_PREFIX) }),
  );
  for (const queue of queues) queue.on('error', reportErrors(report, 'queue', { queue: queue.name }));
  const collectDepth = async () => {
    await Promise.all(
      queues.map(async (queue) => {
        const counts = await queue.getJobCounts(...QUEUE_STATES).catch(() => undefined);
        if (counts === undefined) return;
        for (const state of QUEUE_STATES) metrics.queueJobs.set({ queue: queue.name, state }, counts[state] ?? 0);
      }),
    );
  };

  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      const healthy = workers.every((worker) => worker.isRunning()) && countsClient.status === 'ready';
      response
        .writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: healthy ? 'ok' : 'unhealthy' }));
      return;
    }
    if (path === '/metrics') {
      void collectDepth()
        .then(() => registry.metrics())
        .then((body) => response.writeHead(200, { 'content-type': registry.contentType }).end(body))
        .catch(() => response.writeHead(500).end());
      return;
    }
    response
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: 'not_found', message: 'Try /healthz or /metrics.' }));
  });
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(config.WORKER_METRICS_PORT, config.WORKER_METRICS_HOST, resolve));
  const address = server.address();
  logger.info(
    {
      queues: options.handlers.map((handler) => handler.kind.name),
      // The id in each job-lock token, so an operator can tell which process holds which job.
      workerIds: workers.map((worker) => worker.id),
      port: typeof address === 'object' && address !== null ? address.port : config.WORKER_METRICS_PORT,
    },
    'worker started',
  );

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      // Worker.close waits for the active jobs; their locks are released, so nothing is lost.
      await Promise.allSettled(workers.map((worker) => worker.close()));
      await Promise.allSettled(queues.map((queue) => queue.close()));
      await countsClient.quit().catch(() => undefined);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    })();
    return closing;
  };
  return { workers, server, close };
}

/** SIGTERM/SIGINT run `close` once; a second signal exits at once. */
export function exitOnSignals(close: () => Promise<void>, logger: Logger): void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    signalled = true;
    logger.info({ signal }, 'shutting down');
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
