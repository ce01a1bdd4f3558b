/**
 * What every worker process does besides its own jobs: run BullMQ workers for its handlers,
 * serve /healthz, /readyz and /metrics on a small port (worker/probe-server.ts), publish its job
 * metrics (worker/job-metrics.ts), and shut down gracefully (SIGTERM: finish or hand back active
 * jobs, then quit; a second signal exits at once).
 *
 * /readyz answers 200 only while the process can take jobs: its workers run, a write to Redis
 * would succeed now (the node is a primary, a cluster's state is ok: `writeProblem`, not a PING),
 * and the process's own check (`readiness`) finds nothing wrong.
 */
import type { Server } from 'node:http';
import type { Worker } from 'bullmq';
import type { Registry } from 'prom-client';
import { workerMetricsPort, type Config, type WorkerService } from '@svc/config';
import { createWorkerMetrics, type Logger } from '@svc/telemetry';
import { startBullWorker } from './bullmq.ts';
import { ReadyQueue, closeConnections } from './durable-queue.ts';
import { queueConnection } from './queue-errors.ts';
import { writeProblem, type Redis } from './redis.ts';
import type { RegisteredHandler } from './transport.ts';
import { collectQueueDepth, countJobs } from './worker/job-metrics.ts';
import { closeServer, createProbeServer, listenProbes } from './worker/probe-server.ts';

/** A readiness probe must answer within the orchestrator's timeout (1 s by default in Kubernetes). */
const READY_TIMEOUT_MS = 800;

export interface WorkerProcessOptions {
  /** Which worker this is: it picks the default metrics port, so that two kinds share a host. */
  service: WorkerService;
  config: Config;
  handlers: RegisteredHandler[];
  concurrency: number;
  registry: Registry;
  logger: Logger;
  /** BullMQ workers of other queues this process runs (lists): in health, queue depth and shutdown. */
  extraWorkers?: Worker[];
  /** A problem of the process's own that makes it not ready (e.g. a shared limiter out of reach). */
  readiness?: () => Promise<string | undefined>;
}

export interface WorkerProcess {
  workers: Worker[];
  server: Server;
  close: () => Promise<void>;
}

export async function runWorkerProcess(options: WorkerProcessOptions): Promise<WorkerProcess> {
  const { config, registry, logger } = options;
  const topology = config.redis;
  if (topology === undefined)
    throw new Error(
      'REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS is required for a worker process (embedded mode runs workers inside `npm start`).',
    );
  const metrics = createWorkerMetrics(registry);
  const jobWorkers = options.handlers.map((handler) =>
    startBullWorker(handler, {
      redis: topology,
      redisPrefix: config.REDIS_PREFIX,
      concurrency: options.concurrency,
      logger,
      onJobDone: (queue, outcome, seconds) => metrics.jobDuration.observe({ queue, outcome }, seconds),
    }),
  );
  for (const worker of jobWorkers) countJobs(worker, metrics, { queueWait: true });
  for (const worker of options.extraWorkers ?? []) countJobs(worker, metrics, { queueWait: false });
  const workers = [...jobWorkers, ...(options.extraWorkers ?? [])];

  // Queue depth is read at scrape time through queues opened like any other (bullPrefix: each
  // under its own hash tag), so an idle worker costs Redis nothing between scrapes.
  const countsClient = queueConnection(topology, 'background', 'worker-metrics', logger);
  const queues = workers.map(
    (worker) => new ReadyQueue(worker.name, { connection: countsClient, redisPrefix: config.REDIS_PREFIX, logger }),
  );

  let closing: Promise<void> | undefined;
  const server = createProbeServer({
    readiness: async () => {
      if (closing !== undefined) return 'Shutting down.';
      if (!workers.every((worker) => worker.isRunning())) return 'A queue worker has stopped.';
      // A write must succeed now: a PING also answers from a demoted or cut-off primary.
      return (await writeProblem(countsClient, READY_TIMEOUT_MS)) ?? (await options.readiness?.());
    },
    metrics: async () => {
      // A queue not open yet (its connection not ready) is left out of this scrape, as one whose counts fail.
      const opened = await Promise.all(queues.map((queue) => queue.open().catch(() => undefined)));
      await collectQueueDepth(
        opened.flatMap((producer) => (producer === undefined ? [] : [producer.queue])),
        metrics,
      );
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  });
  const close = () => (closing ??= shutDown(workers, queues, countsClient, server));

  // A port already taken ends the start-up with what went wrong, the queue workers closed first
  // (they would otherwise hold the process up with no probe to see them by).
  const port = await listenProbes(server, workerMetricsPort(config, options.service), config.WORKER_METRICS_HOST).catch(
    async (error: unknown) => {
      await close();
      throw error;
    },
  );
  logger.info(
    {
      queues: options.handlers.map((handler) => handler.kind.name),
      // The id in each job-lock token, so an operator can tell which process holds which job.
      workerIds: workers.map((worker) => worker.id),
      port,
    },
    'worker started',
  );
  return { workers, server, close };
}

/** Worker.close waits for the active jobs; their locks are released, so nothing is lost. */
async function shutDown(workers: Worker[], queues: ReadyQueue[], countsClient: Redis, server: Server): Promise<void> {
  await Promise.allSettled(workers.map((worker) => worker.close()));
  await Promise.allSettled(queues.map((queue) => queue.close()));
  await closeConnections([countsClient]);
  await closeServer(server);
}
