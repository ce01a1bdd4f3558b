/**
 * The gateway on a backend, in either mode: the backend's transport, meter, lists and feedback,
 * and the gateway's own parts made from the backend's state store: the key store, the rate-limit
 * counts and the relay of tool-call cancellations between replicas (Redis only: in one process
 * there is no other replica).
 */
import type { Backend } from '@svc/backend';
import { createGatewayMetrics, type Logger } from '@svc/telemetry';
import type { Registry } from 'prom-client';
import { buildGateway, type GatewayApp } from './app.ts';
import { RedisCancellationRelay } from './mcp/cancellation-relay.ts';
import { MemoryKeyStore, type KeyStore } from './stores/key-store.ts';
import { RedisKeyStore } from './stores/redis-key-store.ts';

export interface GatewayOnBackend {
  gateway: GatewayApp;
  keys: KeyStore;
  /** Closes the gateway's own parts (after the HTTP server, before the backend). */
  close: () => Promise<void>;
}

export async function buildGatewayOn(backend: Backend, options: { registry: Registry; logger: Logger }): Promise<GatewayOnBackend> {
  const { config, state } = backend;
  const { registry, logger } = options;
  const transport = await backend.transport();
  const common = {
    config,
    transport,
    meter: backend.meter,
    metrics: createGatewayMetrics(registry),
    renderMetrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    logger,
    lists: backend.lists,
    feedback: backend.feedback,
  };
  if (state.kind === 'memory') {
    const keys = new MemoryKeyStore();
    return { gateway: await buildGateway({ ...common, keys }), keys, close: () => Promise.resolve() };
  }
  const topology = config.redis;
  if (topology === undefined) throw new Error('A backend in Redis has a Redis topology in its configuration.');
  // Loaded only here: embedded mode never loads BullMQ.
  const { queueConnection } = await import('@svc/jobs/bullmq');
  const keys = new RedisKeyStore(state.redis, state.prefix);
  const relay = new RedisCancellationRelay(
    state.redis,
    queueConnection(topology, 'blocking', 'gateway-tool-cancellations', logger),
    state.prefix,
  );
  const gateway = await buildGateway({ ...common, keys, rateLimitRedis: state.redis, toolCallRelay: relay });
  return { gateway, keys, close: () => relay.close() };
}
