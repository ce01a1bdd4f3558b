/**
 * A Redis outage in the log of a real verify-worker (request jobs, list work and callbacks, each
 * on its own queues and connections) and of a real gateway answering calls all through it: every
 * kind of error is written at most once per 10 s, with the count of those left out, however many
 * reconnect attempts, failed commands and refused calls the outage brings. Redis is reached
 * through a cuttable TCP proxy, so the shared Redis keeps running.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import {
  childEnv,
  dropPrefix,
  freePort,
  spawnNode,
  startTcpProxy,
  stopProcessTree,
  testRedisUrl,
  uniquePrefix,
  waitUntil,
  type TcpProxy,
} from '@svc/testkit';
import { collectLines, startWorkerProcess, type LogLine, type WorkerProcess } from './worker-processes.ts';

const OUTAGE_MS = 6_000;
const WINDOW_MS = 10_000;
const WARN = 40;

/** What makes two lines the same kind of report: its message and what went wrong (a code, else the error's text). */
function kindOf(line: LogLine): string {
  const err = line.err as { code?: string; message?: string } | undefined;
  return `${line.msg.replace(/ \(repeated\)$/, '')}|${err?.code ?? err?.message ?? ''}`;
}

/** Lines of `lines` at warn or above, grouped by kind; checked against the contract's bound since `cutAt`. */
function expectBoundedLog(lines: LogLine[], cutAt: number, label: string): void {
  const byKind = new Map<string, LogLine[]>();
  for (const line of lines) byKind.set(kindOf(line), [...(byKind.get(kindOf(line)) ?? []), line]);
  console.info(`[outage-logs] ${label}: ${lines.length} warn/error lines, ${byKind.size} kinds`);
  expect(lines.length).toBeGreaterThan(0);
  // Each kind: at most one line per window since the cut (the window's first report, then its count).
  const windows = Math.ceil((Date.now() - cutAt) / WINDOW_MS);
  for (const [kind, same] of byKind) {
    expect(same.length, kind).toBeLessThanOrEqual(windows);
    for (let i = 1; i < same.length; i += 1) expect(same[i]!.time - same[i - 1]!.time, kind).toBeGreaterThanOrEqual(WINDOW_MS - 50);
  }
  // What was left out is counted, not lost.
  expect(lines.some((line) => typeof line.suppressed === 'number' && line.suppressed > 0)).toBe(true);
  expect(lines.length).toBeLessThanOrEqual(byKind.size * windows);
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
    expectBoundedLog(during, cutAt, `verify-worker over a ${OUTAGE_MS / 1_000} s outage`);
  });

  it('is alive and ready again after the outage', async () => {
    const port = worker.lines.find((line) => line.msg === 'worker started')?.port;
    const ready = async () => (await fetch(`http://127.0.0.1:${String(port)}/readyz`).catch(() => undefined))?.status === 200;
    await waitUntil(ready, 15_000, 'the worker to be ready again');
    expect(worker.child.exitCode).toBeNull();
  });
});

describe('a gateway answering calls through a Redis outage', () => {
  const prefix = uniquePrefix('outage-logs-gateway');
  let proxy: TcpProxy;
  let gateway: ChildProcess;
  let lines: LogLine[];
  let baseUrl: string;

  beforeAll(async () => {
    proxy = await startTcpProxy(testRedisUrl());
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    gateway = spawnNode('services/gateway/src/main.ts', {
      env: childEnv({ REDIS_URL: proxy.url, REDIS_PREFIX: prefix, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' }),
    });
    lines = collectLines(gateway).lines;
    const ready = async () => (await fetch(`${baseUrl}/readyz`).catch(() => undefined))?.status === 200;
    await waitUntil(ready, 20_000, 'the gateway to be ready');
  });
  afterAll(async () => {
    if (gateway !== undefined) await stopProcessTree(gateway);
    await proxy?.close();
    await dropPrefix(testRedisUrl(), prefix);
  });

  it('refuses every call 503 with Retry-After, and writes each kind of refusal at most once per window, with counts', async () => {
    const before = lines.length;
    const cutAt = Date.now();
    proxy.cut();
    // Calls keep coming for the whole outage, as clients retry: each is refused, none is logged on its own.
    const statuses: Array<[number, string | null]> = [];
    const key = `sk_${'Z'.repeat(32)}`;
    const paths = ['/v1/qr/qr?data=outage', '/v1/usage', '/v1/email-verify/verify?email=not-an-address'];
    for (let i = 0; i < 30; i += 1) {
      const response = await fetch(`${baseUrl}${paths[i % paths.length]!}`, { headers: { authorization: `Bearer ${key}` } });
      await response.arrayBuffer();
      statuses.push([response.status, response.headers.get('retry-after')]);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    proxy.restore();
    expect(statuses.every(([status, retryAfter]) => status === 503 && retryAfter !== null)).toBe(true);
    // The counts of the last window are written when it ends.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, cutAt + WINDOW_MS + 1_000 - Date.now())));
    expectBoundedLog(
      lines.slice(before).filter((line) => line.level >= WARN),
      cutAt,
      `gateway, ${statuses.length} calls refused`,
    );
  });
});
