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

interface WorkerBehindProxy {
  prefix: string;
  proxy: TcpProxy;
  worker: ServiceProcess;
  /** Where its /healthz, /readyz and /metrics answer. */
  base: string;
}

/**
 * A worker process whose Redis is reached through a cuttable TCP proxy, started (and ready)
 * before the tests of the calling describe and stopped after them.
 */
function useWorkerBehindProxy(service: 'qr-worker' | 'verify-worker'): WorkerBehindProxy {
  const prefix = uniquePrefix(`${service}-health`);
  const started: Partial<WorkerBehindProxy> = { prefix };
  beforeAll(async () => {
    started.proxy = await startTcpProxy(testRedisUrl());
    const port = await freePort();
    started.base = `http://127.0.0.1:${port}`;
    started.worker = startService(`services/${service}/src/main.ts`, {
      REDIS_URL: started.proxy.url,
      REDIS_PREFIX: prefix,
      WORKER_METRICS_PORT: String(port),
      WORKER_METRICS_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    });
    await waitUntil(async () => (await status(`${started.base}/readyz`)) === 200, 20_000, `the ${service} to be ready`);
  });
  afterAll(async () => {
    await started.worker?.stop();
    await started.proxy?.close();
    await dropPrefix(testRedisUrl(), prefix);
  });
  const get = <K extends keyof WorkerBehindProxy>(key: K): WorkerBehindProxy[K] => {
    const value = started[key];
    if (value === undefined) throw new Error(`the ${service} is not started`);
    return value;
  };
  return {
    prefix,
    get proxy() {
      return get('proxy');
    },
    get worker() {
      return get('worker');
    },
    get base() {
      return get('base');
    },
  };
}

/** Alive through an outage, however long the orchestrator keeps probing. */
async function staysAlive(base: string): Promise<void> {
  for (let probe = 0; probe < 5; probe++) {
    expect(await status(`${base}/healthz`)).toBe(200);
    // Nothing happens: the worker stays alive while its Redis clients keep reconnecting and failing.
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

describe('worker liveness and readiness', () => {
  const qr = useWorkerBehindProxy('qr-worker');

  it('stays alive without Redis, is not ready until Redis is back, then takes jobs again', async () => {
    expect(await status(`${qr.base}/healthz`)).toBe(200);

    qr.proxy.cut();
    await expect.poll(() => status(`${qr.base}/readyz`), { timeout: 10_000, interval: 200 }).toBe(503);
    const notReady = await fetch(`${qr.base}/readyz`);
    expect(notReady.headers.get('retry-after')).toBe('5');
    expect(await notReady.json()).toEqual({ error: 'service_unavailable', message: 'Redis is not reachable.' });
    await staysAlive(qr.base);

    qr.proxy.restore();
    await expect.poll(() => status(`${qr.base}/readyz`), { timeout: 15_000, interval: 200 }).toBe(200);
    const transport = await BullTransport.create({ redis: testRedisUrl(), redisPrefix: qr.prefix, kinds: [QR_JOB] });
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
    const queue = new Queue(QR_JOB.name, { connection, prefix: bullPrefix(qr.prefix, QR_JOB.name) });
    const metric = async () => {
      const text = await (await fetch(`${qr.base}/metrics`)).text();
      const value = /^queue_oldest_job_age_seconds\{[^}]*queue="qr"[^}]*\} (\S+)$/m.exec(text)?.[1];
      const waiting = /^queue_jobs\{[^}]*queue="qr",state="waiting"[^}]*\} (\S+)$/m.exec(text)?.[1];
      return { age: Number(value), waiting: Number(waiting) };
    };
    try {
      expect((await metric()).age).toBe(0);
      await queue.pause();
      // The first job was made 1.2 s ago (its creation time given, rather than waited for); the second now.
      const firstMadeAt = Date.now() - 1_200;
      await queue.add('qr', { stays: 'waiting' }, { removeOnComplete: true, timestamp: firstMadeAt });
      await queue.add('qr', { stays: 'waiting' }, { removeOnComplete: true });

      const scrapeStarted = Date.now();
      const { age, waiting } = await metric();
      const scrapeEnded = Date.now();
      expect(waiting).toBe(2);
      // The first job's age (1.2 s and more, so not the second one's), bounded by the clocks around the scrape.
      expect(age).toBeGreaterThanOrEqual((scrapeStarted - firstMadeAt) / 1_000 - 0.001);
      expect(age).toBeLessThanOrEqual((scrapeEnded - firstMadeAt) / 1_000 + 0.001);
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
  const verify = useWorkerBehindProxy('verify-worker');

  it('stays alive without Redis, is not ready until Redis is back', async () => {
    expect(await status(`${verify.base}/healthz`)).toBe(200);
    verify.proxy.cut();
    await expect.poll(() => status(`${verify.base}/readyz`), { timeout: 10_000, interval: 200 }).toBe(503);
    await staysAlive(verify.base);
    expect(verify.worker.child.exitCode).toBeNull();
    verify.proxy.restore();
    await expect.poll(() => status(`${verify.base}/readyz`), { timeout: 15_000, interval: 200 }).toBe(200);
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
      // Polled: 'exit' may come before the last of the output is read.
      await expect
        .poll(() => worker.output())
        .toContain(`cannot serve /healthz, /readyz and /metrics on 127.0.0.1:${port}: listen EADDRINUSE`);
    } finally {
      await worker.stop();
      holder.close();
      await dropPrefix(testRedisUrl(), prefix);
    }
  });
});
