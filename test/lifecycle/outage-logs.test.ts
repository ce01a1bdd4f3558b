/**
 * A Redis outage in the log of a real verify-worker (request jobs, list work and callbacks, each
 * on its own queues and connections; the gateway's is outage-logs-gateway.test.ts): every
 * kind of error is written at most once per window (2 s here, 10 s by default), with the count of those left out, however many
 * reconnect attempts, failed commands and refused calls the outage brings. Redis is reached
 * through a cuttable TCP proxy, so the shared Redis keeps running.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropPrefix, startTcpProxy, testRedisUrl, uniquePrefix, waitUntil, type TcpProxy } from '@svc/testkit';
import { WARN, WINDOW_MS, expectBoundedLog, hasCount } from './outage-log-bounds.ts';
import { startWorkerProcess, type WorkerProcess } from './worker-processes.ts';

const OUTAGE_MS = 6_000;

describe('a verify-worker through a Redis outage', () => {
  const prefix = uniquePrefix('outage-logs');
  let proxy: TcpProxy;
  let worker: WorkerProcess;

  beforeAll(async () => {
    proxy = await startTcpProxy(testRedisUrl());
    worker = await startWorkerProcess('verify-worker', 'outage', {
      REDIS_URL: proxy.url,
      REDIS_PREFIX: prefix,
      LOG_LEVEL: 'info',
      LOG_ERROR_WINDOW_MS: String(WINDOW_MS),
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await proxy?.close();
    await dropPrefix(testRedisUrl(), prefix);
  });

  it(`writes a bounded number of lines over a ${OUTAGE_MS / 1_000} s outage, each kind at most once per window, with counts`, async () => {
    const before = worker.lines.length;
    const cutAt = Date.now();
    proxy.cut();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    proxy.restore();
    // The counts are written when their window ends: wait for the first (the check fails without one).
    await waitUntil(() => hasCount(worker.lines.slice(before)), WINDOW_MS + 5_000, 'a count line').catch(() => undefined);
    const during = worker.lines.slice(before).filter((line) => line.level >= WARN);
    expectBoundedLog(during, cutAt, `verify-worker over a ${OUTAGE_MS / 1_000} s outage`);
  });

  it('is alive and ready again after the outage', async () => {
    const port = worker.lines.find((line) => line.msg === 'worker started')?.port;
    const ready = async () => (await fetch(`http://127.0.0.1:${String(port)}/readyz`).catch(() => undefined))?.status === 200;
    await waitUntil(ready, 15_000, 'the worker to be ready again');
    expect(worker.child.exitCode).toBeNull();
  });
});
