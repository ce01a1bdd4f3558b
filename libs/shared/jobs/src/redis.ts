import { Redis, type RedisOptions } from 'ioredis';
import type { RateLimitedLog } from '@svc/telemetry';

/**
 * Two kinds of Redis connection, because the two sides want opposite failure behaviour:
 * - `request`: the gateway's. No offline queue and one retry, so a request fails fast with 503
 *   when Redis is gone instead of hanging until its deadline.
 * - `blocking`: workers and QueueEvents. BullMQ's blocking commands need `maxRetriesPerRequest:
 *   null`, and a worker should ride out a Redis restart rather than die.
 */
export type RedisRole = 'request' | 'blocking';

export function redisOptions(role: RedisRole): RedisOptions {
  const reconnect = (attempt: number) => Math.min(50 * 2 ** attempt, 2_000);
  return role === 'request'
    ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000, retryStrategy: reconnect, lazyConnect: false }
    : { maxRetriesPerRequest: null, enableOfflineQueue: true, connectTimeout: 5_000, retryStrategy: reconnect };
}

/**
 * ioredis emits 'error' on every failed reconnect (without a listener Node would crash): with a
 * `report`, each kind of error is logged once a minute with the connection's name.
 */
export function createRedis(url: string, role: RedisRole, name?: string, report?: RateLimitedLog): Redis {
  const client = new Redis(url, { ...redisOptions(role), connectionName: name });
  client.on('error', (error: Error & { code?: string }) => {
    report?.('error', `redis:${name}:${error.code ?? error.message}`, { component: 'redis', connection: name, err: error }, 'Redis error');
  });
  return client;
}

/** Waits until the client is connected, or rejects after `timeoutMs`. */
export async function waitForRedis(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new Error(`Redis not reachable within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}

export type { Redis };
