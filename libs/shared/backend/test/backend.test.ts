/**
 * The seam's own promises: createBackend picks the mode by whether a Redis is configured; the
 * embedded backend runs the handlers it was given behind its transport, refuses a worker process
 * without Redis, and closes in order; the distributed one opens a process's store connection only
 * when a part needs it (a qr-worker never does).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '@svc/config';
import { registerHandler } from '@svc/jobs';
import { createLogger } from '@svc/telemetry';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { dropPrefix, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { createBackend } from '../src/index.ts';

const logger = createLogger('silent', 'backend-test');
const ECHO = { name: 'echo', payload: z.string(), result: z.string() };
const echo = registerHandler(ECHO, (text) => text.toUpperCase());

describe('the embedded backend (no Redis configured)', () => {
  it('is picked without a Redis, keeps state in memory and runs the served handlers behind its transport', async () => {
    const backend = await createBackend(loadConfig({}), { process: 'embedded', logger });
    expect(backend.mode).toBe('embedded');
    expect(backend.state).toEqual({ kind: 'memory' });
    await backend.serve([echo]);
    const transport = await backend.transport();
    expect(await transport.submit(ECHO, 'hi', { deadlineMs: 1_000, requestId: 'r1' })).toBe('HI');
    // A handler served once the transport exists would never run: refused, not lost.
    await expect(backend.serve([echo])).rejects.toThrow(/before its transport/);
    const cache = backend.cache('test:v1', { encode: String, decode: (raw) => raw }, 2);
    await cache.set('a', 'x', 60);
    expect(await cache.get('a')).toBe('x');
    let cleaned = false;
    backend.onClose(() => {
      cleaned = true;
      return Promise.resolve();
    });
    await backend.close();
    expect(cleaned).toBe(true);
    expect(await transport.isReady()).toBe(false);
  });

  it('refuses a service process: a gateway or worker alone needs the deployment Redis', async () => {
    await expect(createBackend(loadConfig({}), { process: 'qr-worker', logger })).rejects.toThrow(
      /REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS is required for the qr-worker/,
    );
  });
});

describe('the distributed backend', () => {
  const prefix = uniquePrefix('backend');
  afterAll(() => dropPrefix(testRedisUrl(), prefix));

  it('opens a store connection only when a part needs it, and closes it', async () => {
    const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix });
    const observer = createRedis(testRedisUrl(), 'request', 'backend-test-observer');
    await waitForRedis(observer, 5_000);
    const storeConnections = async (name: string) =>
      String(await observer.client('LIST'))
        .split('\n')
        .filter((line) => line.includes(`name=${name}`)).length;
    try {
      const qr = await createBackend(config, { process: 'qr-worker', logger });
      expect(qr.mode).toBe('distributed');
      expect(await storeConnections('qr-store')).toBe(0);
      await qr.close();

      const worker = await createBackend(config, { process: 'verify-worker', logger });
      const before = await storeConnections('verify-cache');
      const { state } = worker;
      if (state.kind !== 'redis') throw new Error('a distributed backend keeps state in Redis');
      await waitForRedis(state.redis, 5_000);
      expect(await storeConnections('verify-cache')).toBe(before + 1);
      // The parts share it: a meter read goes over the same connection.
      expect(await worker.meter.usage('key', '2026-11')).toEqual({});
      expect(await storeConnections('verify-cache')).toBe(before + 1);
      // A part made on the state ends before the connection closes, and can still use it then.
      const seen: string[] = [];
      worker.onClose(async () => {
        seen.push(`cleanup with the store ${await state.redis.ping()}`);
      });
      await worker.close();
      expect(seen).toEqual(['cleanup with the store PONG']);
      await expect.poll(() => storeConnections('verify-cache')).toBe(before);
    } finally {
      observer.disconnect();
    }
  });
});
