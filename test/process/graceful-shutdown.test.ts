/**
 * SIGTERM to a real gateway process under load: readiness turns false, every request already
 * accepted gets its answer, then the process exits 0. A worker in this test holds each job for a
 * while, so the requests are truly in flight when the signal lands. And a worker process whose
 * close cannot finish exits once SHUTDOWN_GRACE_MS has passed.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QR_JOB } from '@svc/contracts';
import { registerHandler } from '@svc/jobs';
import { startBullWorker, type Worker } from '@svc/jobs/bullmq';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { dropPrefix, exitOf, freePort, spawnNode, stopProcessTree, testRedisUrl, uniquePrefix, waitUntil, childEnv } from '@svc/testkit';
import { RedisKeyStore, generateApiKey } from '@svc/gateway';
import { renderQr } from '@svc/qr-worker';
import { linesOf, startWorkerProcess, type WorkerProcess } from '../lifecycle/worker-processes.ts';

describe('graceful shutdown of the gateway process', () => {
  const prefix = uniquePrefix('shutdown');
  const key = generateApiKey();
  let gateway: ChildProcess;
  let worker: Worker;
  let baseUrl: string;
  let jobsTaken = 0;
  let exitCode: Promise<number | null>;
  // The jobs run until the test lets them end: the gateway drains while they are still running.
  let releaseJobs = (): void => undefined;
  const jobsReleased = new Promise<void>((resolve) => (releaseJobs = resolve));

  beforeAll(async () => {
    const url = testRedisUrl();
    const redis = createRedis(url, 'request');
    await waitForRedis(redis, 5_000);
    await new RedisKeyStore(redis, prefix).create('shutdown', key);
    redis.disconnect();
    const slowQr = registerHandler(QR_JOB, async (payload) => {
      jobsTaken += 1;
      await jobsReleased;
      return renderQr(payload);
    });
    worker = startBullWorker(slowQr, { redis: url, redisPrefix: prefix, concurrency: 50 });
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    gateway = spawnNode('services/gateway/src/main.ts', {
      env: childEnv({
        REDIS_URL: url,
        REDIS_PREFIX: prefix,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        SHUTDOWN_GRACE_MS: '15000',
        RATE_LIMIT_QR_GENERATE: '0',
      }),
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    exitCode = exitOf(gateway);
    await waitUntil(
      async () => (await fetch(`${baseUrl}/readyz`).catch(() => undefined))?.status === 200,
      20_000,
      'the gateway to be ready',
    );
  });

  afterAll(async () => {
    releaseJobs();
    if (gateway !== undefined) await stopProcessTree(gateway, { signal: 'SIGKILL' });
    await worker?.close();
    await dropPrefix(testRedisUrl(), prefix);
  });

  it('answers every accepted request, turns unready, and exits 0', async () => {
    const requests = Array.from({ length: 30 }, (_, i) =>
      fetch(`${baseUrl}/v1/qr/qr?data=inflight-${i}`, { headers: { authorization: `Bearer ${key}` } }).then(
        async (response) => ({ status: response.status, body: await response.text() }),
        (error: unknown) => ({ status: 0, body: String(error) }),
      ),
    );
    // Every request is accepted and its job running before the signal lands.
    await waitUntil(() => jobsTaken === requests.length, 10_000, 'the worker to hold every job');
    gateway.kill('SIGTERM');
    // Draining, as soon as the signal is handled and while the jobs still run (until released): a
    // new request on a new connection is not accepted (refused or 503).
    const readiness = () =>
      fetch(`${baseUrl}/readyz`).then(
        (response) => response.status,
        () => 0,
      );
    await expect.poll(readiness, { timeout: 1_000, interval: 20 }).not.toBe(200);
    expect([0, 503]).toContain(await readiness());
    releaseJobs();

    const answers = await Promise.all(requests);
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    expect(answers.every((answer) => answer.body.startsWith('<svg'))).toBe(true);
    await expect(exitCode).resolves.toBe(0);
  }, 30_000);
});

describe('graceful shutdown of a worker whose Redis never answers', () => {
  let worker: WorkerProcess | undefined;
  afterAll(async () => worker?.stop('SIGKILL'));

  // BullMQ's close waits for its connection: without the bound, this worker outlived SIGTERM for
  // as long as anyone waited (nine minutes, once), and only SIGKILL ended it.
  it('exits 1 on SIGTERM once SHUTDOWN_GRACE_MS has passed, saying why', async () => {
    worker = await startWorkerProcess('verify-worker', 'unreachable', {
      // A port nothing listens on: every connection is refused, again and again.
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_MS: '1000',
    });
    const exited = exitOf(worker.child);
    const signalled = Date.now();
    worker.child.kill('SIGTERM');
    await expect(exited).resolves.toBe(1);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(1_000);
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(linesOf(worker, 'shutdown outlived SHUTDOWN_GRACE_MS; exiting')).toHaveLength(1);
  }, 30_000);
});
