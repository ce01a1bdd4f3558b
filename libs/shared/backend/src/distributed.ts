/**
 * Distributed mode's backend: state in Redis (one store connection per process, every key under
 * REDIS_PREFIX and hash-tagged by its own entity), jobs, list work and callbacks over BullMQ. Each
 * part is opened at first use, so that a process opens only what its roles use (a qr-worker no
 * store connection, a gateway no callback queue), and closed by `close()` in order.
 */
import type { Config, RedisTopology } from '@svc/config';
import { QR_JOB, VERIFY_JOB } from '@svc/contracts';
import { redisFeedback } from '@svc/feedback/redis';
import type { RegisteredHandler } from '@svc/jobs';
import { BullTransport, closeConnections, queueConnection, type Worker } from '@svc/jobs/bullmq';
import type { Redis } from '@svc/jobs/redis';
import { runWorkerProcess, type WorkerProcess } from '@svc/jobs/worker';
import { BullListQueue, startListWorker } from '@svc/lists/bullmq';
import { RedisListStore } from '@svc/lists/redis';
import { RedisMeter } from '@svc/metering';
import { createBullCallbackDispatcher, startCallbackConsumer, type CallbackConsumer } from '@svc/webhooks/bullmq';
import type { Backend, BackendOptions, BackendProcess, StateStore } from './backend.ts';
import { ttlCacheIn } from './ttl-cache.ts';

/** A part made at first use, and whether it was. */
function once<T>(make: () => T): { (): T; made: () => T | undefined } {
  let value: T | undefined;
  const get = () => (value ??= make());
  get.made = () => value;
  return get;
}

/**
 * The store connection of each process: a gateway's answers a caller who waits (it fails fast);
 * a worker's serves background work (it rides out a short outage).
 */
const STORE_CONNECTION: Record<Exclude<BackendProcess, 'embedded'>, { role: 'request' | 'background'; name: string }> = {
  gateway: { role: 'request', name: 'gateway-store' },
  'verify-worker': { role: 'background', name: 'verify-cache' },
  'qr-worker': { role: 'background', name: 'qr-store' },
};

export function createDistributedBackend(config: Config, options: BackendOptions): Backend {
  const topology: RedisTopology | undefined = config.redis;
  if (topology === undefined)
    throw new Error(
      'REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS is required in distributed mode; `npm start` without them runs embedded mode.',
    );
  if (options.process === 'embedded') throw new Error('The embedded process has an embedded backend.');
  const { logger } = options;
  const prefix = config.REDIS_PREFIX;
  const connection = STORE_CONNECTION[options.process];
  const redis = once<Redis>(() => queueConnection(topology, connection.role, connection.name, logger));
  const state = once<StateStore>(() => ({ kind: 'redis', redis: redis(), prefix }));
  // A gateway records a charge only while its answer can still be waited for: half the command timeout.
  const meter = once(
    () => new RedisMeter(redis(), prefix, options.process === 'gateway' ? Math.floor(topology.commandTimeoutMs / 2) : undefined),
  );
  const feedback = once(() => redisFeedback(redis(), prefix, config));
  const listStore = once(() => new RedisListStore(redis(), prefix));
  const listQueue = once(() => new BullListQueue(redis(), prefix, logger));
  const dispatcher = once(() => options.dispatcher ?? createBullCallbackDispatcher({ redis: topology, redisPrefix: prefix, logger }));
  const transport = once(() => BullTransport.create({ redis: topology, redisPrefix: prefix, kinds: [QR_JOB, VERIFY_JOB], logger }));
  const listWorkers: Worker[] = [];
  const stops: Array<() => void> = [];
  const cleanups: Array<() => Promise<void>> = [];
  let served: WorkerProcess | undefined;
  let callbacks: CallbackConsumer | undefined;

  return {
    mode: 'distributed',
    config,
    get state() {
      return state();
    },
    get meter() {
      return meter();
    },
    get feedback() {
      return feedback();
    },
    get lists() {
      return { store: listStore(), queue: listQueue() };
    },
    get dispatcher() {
      return dispatcher();
    },
    cache: (name, codec) => ttlCacheIn(state(), name, codec),
    transport: () => transport(),
    serve: async (handlers: RegisteredHandler[], serveOptions) => {
      if (serveOptions === undefined)
        throw new Error('A distributed worker process is served with its options (service, concurrency, metrics).');
      // The list worker is the process's own too: in its health, queue depth and shutdown.
      served = await runWorkerProcess({ ...serveOptions, config, handlers, extraWorkers: listWorkers });
    },
    workLists: (processor, work) => {
      listWorkers.push(
        startListWorker(processor.handle, {
          redis: topology,
          redisPrefix: prefix,
          concurrency: config.LIST_WORKER_CONCURRENCY,
          ...(work.lockDurationMs === undefined ? {} : { lockDurationMs: work.lockDurationMs }),
          // A rejection is logged by the queue layer (rate-limited), not dropped.
          onFailed: (job, error) => processor.failJob(job, error),
          logger,
        }),
      );
      stops.push(processor.startJanitor(work.janitorIntervalMs));
    },
    deliverCallbacks: () => {
      // Signed with each key's webhook secret (read from Redis at every attempt), retried for 24 h.
      callbacks ??= startCallbackConsumer({
        redis: topology,
        redisPrefix: prefix,
        allowPrivate: config.LIST_ALLOW_PRIVATE_CALLBACKS,
        logger,
      });
    },
    onClose: (cleanup) => {
      cleanups.push(cleanup);
    },
    close: async () => {
      const made = transport.made();
      if (made !== undefined) await (await made.catch(() => undefined))?.close();
      for (const stop of stops) stop();
      await Promise.all(listWorkers.map((worker) => worker.close()));
      await listQueue.made()?.close();
      await Promise.all([served?.close(), callbacks?.close()]);
      await dispatcher.made()?.close();
      for (const cleanup of cleanups) await cleanup();
      // The store connection last, bounded and whatever state it is in (a quit on a connection
      // still reconnecting is refused at once: no offline queue).
      const store = redis.made();
      if (store !== undefined) await closeConnections([store]);
    },
  };
}
