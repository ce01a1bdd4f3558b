/**
 * A real qr-worker process behind a cuttable TCP proxy to Redis: losing Redis makes it not ready
 * but never not alive (an orchestrator must not restart every worker during a Redis outage), and
 * it takes jobs again once Redis is back. Its /metrics reports how long the oldest waiting job has
 * waited, read from Redis at scrape time.
 */
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { QR_JOB } from '@svc/contracts';
import { BullTransport, bullPrefix } from '@svc/jobs/bullmq';
import { createRedis } from '@svc/jobs/redis';
import { dropPrefix, startTcpProxy, testRedisUrl, uniquePrefix, waitUntil, type TcpProxy } from '@svc/testkit';
import { exitOf, freePort, startService, type ServiceProcess } from '@svc/testkit';

const status = async (url: string): Promise<number> => (await fetch(url).catch(() => undefined))?.status ?? 0;

describe('worker liveness and readiness', () => {
  const prefix = uniquePrefix('worker-health');
  let proxy: TcpProxy;
  let worker: ServiceProcess;
  let base: string;

  beforeAll(async () => {
    proxy = await startTcpProxy(testRedisUrl());
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    worker = startService('services/qr-worker/src/main.ts', {
      REDIS_URL: proxy.url,
      REDIS_PREFIX: prefix,
      WORKER_METRICS_PORT: String(port),
      WORKER_METRICS_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    });
    await waitUntil(async () => (await status(`${base}/readyz`)) === 200, 20_000, 'the qr-worker to be ready');
  });

  afterAll(async () => {
    await worker?.stop();
    await proxy?.close();
    await dropPrefix(testRedisUrl(), prefix);
  });

  it('stays alive without Redis, is not ready until Redis is back, then takes jobs again', async () => {
    expect(await status(`${base}/healthz`)).toBe(200);

    proxy.cut();
    await expect.poll(() => status(`${base}/readyz`), { timeout: 10_000, interval: 200 }).toBe(503);
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.headers.get('retry-after')).toBe('5');
    expect(await notReady.json()).toEqual({ error: 'service_unavailable', message: 'Redis is not reachable.' });
    // Alive through the whole outage, however long the orchestrator keeps probing.
    for (let probe = 0; probe < 5; probe++) {
      expect(await status(`${base}/healthz`)).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }

    proxy.restore();
    await expect.poll(() => status(`${base}/readyz`), { timeout: 15_000, interval: 200 }).toBe(200);
    const transport = await BullTransport.create({ url: testRedisUrl(), redisPrefix: prefix, kinds: [QR_JOB] });
    try {
      const payload = { data: 'after the outage', format: 'svg', scale: 4, margin: 4, dark: '#000000ff', light: '#ffffffff' } as const;
      const result = await transport.submit(QR_JOB, payload, { deadlineMs: 10_000, requestId: 'health-test' });
      expect(result).toMatchObject({ ok: true });
    } finally {
      await transport.close();
    }
  });

  it('reports the age of the oldest job waiting to start', async () => {
    const connection = createRedis(testRedisUrl(), 'request');
    const queue = new Queue(QR_JOB.name, { connection, prefix: bullPrefix(prefix) });
    const metric = async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      const value = /^queue_oldest_job_age_seconds\{[^}]*queue="qr"[^}]*\} (\S+)$/m.exec(text)?.[1];
      const waiting = /^queue_jobs\{[^}]*queue="qr",state="waiting"[^}]*\} (\S+)$/m.exec(text)?.[1];
      return { age: Number(value), waiting: Number(waiting) };
    };
    try {
      expect((await metric()).age).toBe(0);
      await queue.pause();
      const beforeFirst = Date.now();
      await queue.add('qr', { stays: 'waiting' }, { removeOnComplete: true });
      const afterFirst = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      await queue.add('qr', { stays: 'waiting' }, { removeOnComplete: true });

      const scrapeStarted = Date.now();
      const { age, waiting } = await metric();
      const scrapeEnded = Date.now();
      expect(waiting).toBe(2);
      // The first job's age (older than the 1.2 s gap, so not the second one), bounded by the clocks around it.
      expect(age).toBeGreaterThanOrEqual((scrapeStarted - afterFirst) / 1_000 - 0.001);
      expect(age).toBeLessThanOrEqual((scrapeEnded - beforeFirst) / 1_000 + 0.001);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      connection.disconnect();
    }
  });
});

// The verify-worker holds more Redis connections than the qr-worker (session slots, list work,
// callbacks): none of them may take the process down or its liveness with it.
describe('verify-worker liveness and readiness', () => {
  const prefix = uniquePrefix('verify-health');
  let proxy: TcpProxy;
  let worker: ServiceProcess;
  let base: string;

  beforeAll(async () => {
    proxy = await startTcpProxy(testRedisUrl());
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    worker = startService('services/verify-worker/src/main.ts', {
      REDIS_URL: proxy.url,
      REDIS_PREFIX: prefix,
      WORKER_METRICS_PORT: String(port),
      WORKER_METRICS_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    });
    await waitUntil(async () => (await status(`${base}/readyz`)) === 200, 20_000, 'the verify-worker to be ready');
  });

  afterAll(async () => {
    await worker?.stop();
    await proxy?.close();
    await dropPrefix(testRedisUrl(), prefix);
  });

  it('stays alive without Redis, is not ready until Redis is back', async () => {
    expect(await status(`${base}/healthz`)).toBe(200);
    proxy.cut();
    await expect.poll(() => status(`${base}/readyz`), { timeout: 10_000, interval: 200 }).toBe(503);
    for (let probe = 0; probe < 5; probe++) {
      expect(await status(`${base}/healthz`)).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(worker.child.exitCode).toBeNull();
    proxy.restore();
    await expect.poll(() => status(`${base}/readyz`), { timeout: 15_000, interval: 200 }).toBe(200);
  });
});

describe('a worker whose probe port is taken', () => {
  it('exits 1 at start-up and says which address it could not serve on, instead of running with no probes', async () => {
    const holder = createServer();
    holder.listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const address = holder.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const prefix = uniquePrefix('port-taken');
    const worker = startService('services/qr-worker/src/main.ts', {
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      WORKER_METRICS_PORT: String(port),
      WORKER_METRICS_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    });
    try {
      expect(await Promise.race([exitOf(worker.child), sleep(20_000).then(() => 'still running')])).toBe(1);
      expect(worker.output()).toContain(`cannot serve /healthz, /readyz and /metrics on 127.0.0.1:${port}: listen EADDRINUSE`);
    } finally {
      await worker.stop();
      holder.close();
      await dropPrefix(testRedisUrl(), prefix);
    }
  });
});
