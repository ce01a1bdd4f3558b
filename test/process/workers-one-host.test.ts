/**
 * A qr-worker and a verify-worker started on one host as the README says, with no settings but
 * their Redis: both run, each with its own default metrics port (verify 9100, qr 9101), and each
 * answers its probes there. (One port for both was EADDRINUSE and a stack trace.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_WORKER_METRICS_PORTS } from '@svc/config';
import { dropPrefix, testRedisUrl, uniquePrefix, waitUntil } from '@svc/testkit';
import { startWorkerProcess, type WorkerProcess } from '../lifecycle/worker-processes.ts';

describe('both workers on one host with the default settings', () => {
  const prefix = uniquePrefix('one-host');
  const started: WorkerProcess[] = [];
  afterAll(async () => {
    await Promise.all(started.map((worker) => worker.stop()));
    await dropPrefix(testRedisUrl(), prefix);
  });

  it('run side by side, on distinct default metrics ports', async () => {
    expect(DEFAULT_WORKER_METRICS_PORTS['verify-worker']).not.toBe(DEFAULT_WORKER_METRICS_PORTS['qr-worker']);
    // No WORKER_METRICS_PORT and no WORKER_METRICS_HOST: the defaults, as `npm run start:*-worker` has them.
    const unset = { WORKER_METRICS_PORT: undefined, WORKER_METRICS_HOST: undefined };
    const env = { REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'info', ...unset };
    started.push(await startWorkerProcess('verify-worker', 'verify', env));
    started.push(await startWorkerProcess('qr-worker', 'qr', env));
    const ports = started.map((worker) => worker.lines.find((line) => line.msg === 'worker started')?.port);
    expect(ports).toEqual([DEFAULT_WORKER_METRICS_PORTS['verify-worker'], DEFAULT_WORKER_METRICS_PORTS['qr-worker']]);
    for (const port of ports) {
      await waitUntil(
        async () => (await fetch(`http://127.0.0.1:${String(port)}/readyz`).catch(() => undefined))?.status === 200,
        10_000,
        `the worker on ${String(port)} to be ready`,
      );
    }
    for (const worker of started) expect(worker.child.exitCode).toBeNull();
  });
});
