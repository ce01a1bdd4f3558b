/**
 * What every worker process does besides its own jobs: run BullMQ workers for its handlers,
 * serve /healthz, /readyz and /metrics on a small port, publish queue depth and the age of the
 * oldest waiting job from Redis at scrape time, and shut down gracefully (SIGTERM: finish or hand
 * back active jobs, then quit; a second signal exits at once).
 *
 * Liveness and readiness differ on purpose: /healthz answers 200 as long as the process can
 * answer at all, so an orchestrator never restarts every worker because Redis went away; /readyz
 * answers 200 only while the process can take jobs (its workers run and a write to Redis would
 * succeed now: the node is a primary, a cluster's state is ok).
 */
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { Queue, type Worker } from 'bullmq';
import type { Registry } from 'prom-client';
import type { Config } from '@svc/config';
import { bullPrefix, reportErrors, startBullWorker } from './bullmq.ts';
import type { RegisteredHandler } from './transport.ts';
import { createWorkerMetrics, rateLimitedLog, type Logger } from '@svc/telemetry';
import { createRedis, writeProblem } from './redis.ts';

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed'] as const;
/** A readiness probe must answer within the orchestrator's timeout (1 s by default in Kubernetes). */
const READY_TIMEOUT_MS = 800;

export interface WorkerProcessOptions {
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
  const report = rateLimitedLog(logger);
  const workers = options.handlers.map((handler) => {
    const worker = startBullWorker(handler, {
      redis: topology,
      redisPrefix: config.REDIS_PREFIX,
      concurrency: options.concurrency,
      logger,
      onJobDone: (queue, outcome, seconds) => metrics.jobDuration.observe({ queue, outcome }, seconds),
    });
    worker.on('active', (job) => {
      metrics.activeJobs.inc({ queue: handler.kind.name });
      // Enqueued by the gateway's clock, started by this one: hosts are assumed NTP-synchronised.
      if (job.processedOn !== undefined)
        metrics.queueWait.observe({ queue: handler.kind.name }, Math.max(0, job.processedOn - job.timestamp) / 1_000);
    });
    const done = () => metrics.activeJobs.dec({ queue: handler.kind.name });
    worker.on('completed', done);
    worker.on('failed', (job) => {
      if (job !== undefined) done();
    });
    return worker;
  });
  for (const worker of options.extraWorkers ?? []) {
    worker.on('active', () => metrics.activeJobs.inc({ queue: worker.name }));
    worker.on('completed', () => metrics.activeJobs.dec({ queue: worker.name }));
    worker.on('failed', (job) => {
      if (job !== undefined) metrics.activeJobs.dec({ queue: worker.name });
    });
    workers.push(worker);
  }

  // Queue depth is read at scrape time, so an idle worker costs Redis nothing between scrapes.
  const countsClient = createRedis(topology, 'background', 'worker-metrics', report);
  const queues = [
    ...options.handlers.map((handler) => handler.kind.name),
    ...(options.extraWorkers ?? []).map((worker) => worker.name),
  ].map((name) => new Queue(name, { connection: countsClient, prefix: bullPrefix(config.REDIS_PREFIX, name) }));
  for (const queue of queues) queue.on('error', reportErrors(report, 'queue', { queue: queue.name }));
  const collectDepth = async () => {
    await Promise.all(
      queues.map(async (queue) => {
        const counts = await queue.getJobCounts(...QUEUE_STATES).catch(() => undefined);
        if (counts === undefined) return;
        for (const state of QUEUE_STATES) metrics.queueJobs.set({ queue: queue.name, state }, counts[state] ?? 0);
        // Only the states the counts show jobs in are read (most scrapes find none waiting).
        const oldest = await oldestWaitingSince(queue, (counts.waiting ?? 0) > 0, (counts.prioritized ?? 0) > 0).catch(() => undefined);
        if (oldest !== undefined)
          metrics.oldestJobAge.set({ queue: queue.name }, oldest === null ? 0 : Math.max(0, Date.now() - oldest) / 1_000);
      }),
    );
  };

  let closing: Promise<void> | undefined;
  const readiness = async (): Promise<string | undefined> => {
    if (closing !== undefined) return 'Shutting down.';
    if (!workers.every((worker) => worker.isRunning())) return 'A queue worker has stopped.';
    // A write must succeed now: a PING also answers from a demoted or cut-off primary.
    return (await writeProblem(countsClient, READY_TIMEOUT_MS)) ?? (await options.readiness?.());
  };

  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      sendJson(response, 200, { status: 'ok' });
      return;
    }
    if (path === '/readyz') {
      void readiness().then((problem) =>
        problem === undefined
          ? sendJson(response, 200, { status: 'ready' })
          : sendJson(response, 503, { error: 'service_unavailable', message: problem }, { 'retry-after': '5' }),
      );
      return;
    }
    if (path === '/metrics') {
      void collectDepth()
        .then(() => registry.metrics())
        .then((body) => response.writeHead(200, { 'content-type': registry.contentType }).end(body))
        .catch(() => response.writeHead(500).end());
      return;
    }
    sendJson(response, 404, { error: 'not_found', message: 'Try /healthz, /readyz or /metrics.' });
  });
  server.requestTimeout = 10_000;
  const close = () => {
    closing ??= (async () => {
      // Worker.close waits for the active jobs; their locks are released, so nothing is lost.
      await Promise.allSettled(workers.map((worker) => worker.close()));
      await Promise.allSettled(queues.map((queue) => queue.close()));
      await countsClient.quit().catch(() => undefined);
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    })();
    return closing;
  };
  server.listen(config.WORKER_METRICS_PORT, config.WORKER_METRICS_HOST);
  // A port already taken ends the start-up with what went wrong, the queue workers closed first
  // (they would otherwise hold the process up with no probe to see them by).
  await once(server, 'listening').catch(async (error: unknown) => {
    await close();
    const where = `${config.WORKER_METRICS_HOST}:${config.WORKER_METRICS_PORT}`;
    throw new Error(`cannot serve /healthz, /readyz and /metrics on ${where}: ${error instanceof Error ? error.message : String(error)}`);
  });
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

  return { workers, server, close };
}

/** Creation time (ms) of the job that has waited longest to start, or null when none waits. */
async function oldestWaitingSince(queue: Queue, anyWaiting: boolean, anyPrioritized: boolean): Promise<number | null> {
  // The wait list is FIFO (its tail is the oldest); prioritized jobs are ordered by priority,
  // so the one due next stands for them: reading the whole set at every scrape would cost too much.
  const [waiting, prioritized] = await Promise.all([
    anyWaiting ? queue.getJobs(['waiting'], 0, 0, true) : [],
    anyPrioritized ? queue.getJobs(['prioritized'], 0, 0, true) : [],
  ]);
  const stamps = [...waiting, ...prioritized].map((job) => job.timestamp);
  return stamps.length === 0 ? null : Math.min(...stamps);
}

function sendJson(response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}
