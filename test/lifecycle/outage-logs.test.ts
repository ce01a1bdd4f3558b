/**
 * A Redis outage in the log of a real verify-worker (request jobs, list work and callbacks, each
 * on its own queues and connections): every kind of error is written at most once per 10 s, with
 * the count of those left out, however many reconnect attempts and failed commands the outage
 * brings. Redis is reached through a cuttable TCP proxy, so the shared Redis keeps running.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropPrefix, startTcpProxy, testRedisUrl, uniquePrefix, waitUntil, type TcpProxy } from '@svc/testkit';
import { startWorkerProcess, type LogLine, type WorkerProcess } from './worker-processes.ts';

const OUTAGE_MS = 6_000;
const WINDOW_MS = 10_000;
const WARN = 40;

/** What makes two lines the same kind of report: its message and what went wrong (a code, else the error's text). */
function kindOf(line: LogLine): string {
  const err = line.err as { code?: string; message?: string } | undefined;
  return `${line.msg.replace(/ \(repeated\)$/, '')}|${err?.code ?? err?.message ?? ''}`;
}

describe('a verify-worker through a Redis outage', () => {
  const prefix = uniquePrefix('outage-logs');
  let proxy: TcpProxy;
  let worker: WorkerProcess;

  beforeAll(async () => {
    proxy = await startTcpProxy(testRedisUrl());
    worker = await startWorkerProcess('verify-worker', 'outage', { REDIS_URL: proxy.url, REDIS_PREFIX: prefix, LOG_LEVEL: 'info' });
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
    // The counts of the last window are written when it ends.
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS - (OUTAGE_MS % WINDOW_MS) + 1_000));
    const during = worker.lines.slice(before).filter((line) => line.level >= WARN);
    const byKind = new Map<string, LogLine[]>();
    for (const line of during) byKind.set(kindOf(line), [...(byKind.get(kindOf(line)) ?? []), line]);
    console.info(`[outage-logs] ${during.length} warn/error lines over a ${OUTAGE_MS / 1_000} s outage, ${byKind.size} kinds`);

    expect(during.length).toBeGreaterThan(0);
    // Each kind: at most one line per window since the cut (the window's first report, then its count).
    const windows = Math.ceil((Date.now() - cutAt) / WINDOW_MS);
    for (const [kind, lines] of byKind) {
      expect(lines.length, kind).toBeLessThanOrEqual(windows);
      for (let i = 1; i < lines.length; i += 1) expect(lines[i]!.time - lines[i - 1]!.time, kind).toBeGreaterThanOrEqual(WINDOW_MS - 50);
    }
    // What was left out is counted, not lost.
    expect(during.some((line) => typeof line.suppressed === 'number' && line.suppressed > 0)).toBe(true);
    expect(during.length).toBeLessThanOrEqual(byKind.size * windows);
  });

  it('is alive and ready again after the outage', async () => {
    const port = worker.lines.find((line) => line.msg === 'worker started')?.port;
    const ready = async () => (await fetch(`http://127.0.0.1:${String(port)}/readyz`).catch(() => undefined))?.status === 200;
    await waitUntil(ready, 15_000, 'the worker to be ready again');
    expect(worker.child.exitCode).toBeNull();
  });
});
