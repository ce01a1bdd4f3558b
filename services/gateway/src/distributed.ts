/** The distributed gateway: jobs over BullMQ, keys, meters and rate limits in Redis. */
import type { Config } from '@svc/config';
import { QR_JOB, VERIFY_JOB } from '@svc/contracts';
import { BullTransport, closeConnections, queueConnection } from '@svc/jobs/bullmq';
import { BullListQueue } from '@svc/lists/bullmq';
import { RedisListStore } from '@svc/lists/redis';
import { RedisMeter } from '@svc/metering';
import { redisFeedback } from '@svc/feedback/redis';
import { createGatewayMetrics, createLogger, createRegistry } from '@svc/telemetry';
import { buildGateway, type GatewayApp } from './app.ts';
import { RedisCancellationRelay } from './mcp/cancellation-relay.ts';
import { consoleLine } from './console-url.ts';
import { serve } from './server.ts';
import { RedisKeyStore } from './stores/redis-key-store.ts';

export interface DistributedGateway {
  gateway: GatewayApp;
  keys: RedisKeyStore;
  transport: BullTransport;
  /** Close these after the HTTP server, in order. */
  closers: Array<() => Promise<void>>;
}

export async function buildDistributedGateway(config: Config): Promise<DistributedGateway> {
  const topology = config.redis;
  if (topology === undefined)
    throw new Error(
      'REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS is required for the distributed gateway; `npm start` without them runs embedded mode.',
    );
  const registry = createRegistry({ service: 'gateway' });
  const logger = createLogger(config.LOG_LEVEL, 'gateway');
  const redis = queueConnection(topology, 'request', 'gateway-store', logger);
  const transport = await BullTransport.create({ redis: topology, redisPrefix: config.REDIS_PREFIX, kinds: [QR_JOB, VERIFY_JOB], logger });
  const keys = new RedisKeyStore(redis, config.REDIS_PREFIX);
  const listQueue = new BullListQueue(redis, config.REDIS_PREFIX, logger);
  const relay = new RedisCancellationRelay(
    redis,
    queueConnection(topology, 'blocking', 'gateway-tool-cancellations', logger),
    config.REDIS_PREFIX,
  );
  const gateway = await buildGateway({
    config,
    transport,
    keys,
    // Half the command timeout: a record Redis makes is one whose answer can still be waited for.
    meter: new RedisMeter(redis, config.REDIS_PREFIX, Math.floor(topology.commandTimeoutMs / 2)),
    rateLimitRedis: redis,
    metrics: createGatewayMetrics(registry),
    renderMetrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    logger,
    lists: { store: new RedisListStore(redis, config.REDIS_PREFIX), queue: listQueue },
    toolCallRelay: relay,
    feedback: redisFeedback(redis, config.REDIS_PREFIX, config),
  });
  return {
    gateway,
    keys,
    transport,
    // The store connection last, bounded and whatever state it is in (a quit on a connection still
    // reconnecting is refused at once: no offline queue).
    closers: [() => transport.close(), () => listQueue.close(), () => relay.close(), () => closeConnections([redis])],
  };
}

export async function startDistributedGateway(config: Config): Promise<string> {
  const logger = createLogger(config.LOG_LEVEL, 'gateway');
  const { gateway, closers } = await buildDistributedGateway(config);
  const address = await serve(gateway, { config, logger, closers });
  logger.info({ address, mode: 'distributed' }, 'gateway listening');
  // Where a person goes next, as `npm start` prints it (keys come from `npm run keys`).
  process.stdout.write(consoleLine(address));
  return address;
}
