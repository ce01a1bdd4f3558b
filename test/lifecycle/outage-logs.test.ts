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
import { startWorkerProcess, type LogLine, type WorkerProcess } from './worker-processes.ts';

/** How many windows' ends wrote a count of reports left out: count lines at least a window apart. */
function countWindows(lines: readonly LogLine[]): number {
  let windows = 0;
  let last = -Infinity;
  for (const line of lines) {
    if (!hasCount([line]) || line.time - last < WINDOW_MS - 50) continue;
    windows += 1;
    last = line.time;
  }
  return windows;
}

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

  it('writes a bounded number of lines over an outage of two windows and more, each kind at most once per window, with counts', async () => {
    const before = worker.lines.length;
    const cutAt = Date.now();
    proxy.cut();
    // The outage lasts until the counts of two windows are written (a window's count comes at its
    // end): the bound is checked over windows that went by. A log that counts nothing fails below.
    await waitUntil(() => countWindows(worker.lines.slice(before)) >= 2, 2 * WINDOW_MS + 10_000, 'the counts of two windows').catch(
      () => undefined,
    );
    proxy.restore();
    const during = worker.lines.slice(before).filter((line) => line.level >= WARN);
    expectBoundedLog(during, cutAt, `verify-worker over a ${((Date.now() - cutAt) / 1_000).toFixed(1)} s outage`);
  });

  it('is alive and ready again after the outage', async () => {
    const port = worker.lines.find((line) => line.msg === 'worker started')?.port;
    const ready = async () => (await fetch(`http://127.0.0.1:${String(port)}/readyz`).catch(() => undefined))?.status === 200;
    await waitUntil(ready, 15_000, 'the worker to be ready again');
    expect(worker.child.exitCode).toBeNull();
  });
});
