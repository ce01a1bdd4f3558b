/**
 * A Redis outage in the log of a real gateway answering calls all through it: every call is
 * refused 503 with Retry-After, and every kind of refusal is written at most once per window (2 s here, 10 s by default), with
 * the count of those left out. Redis is reached through a cuttable TCP proxy, so the shared Redis
 * keeps running.
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
import { WARN, WINDOW_MS, expectBoundedLog, hasCount } from './outage-log-bounds.ts';
import { collectLines, type LogLine } from './worker-processes.ts';

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
      env: childEnv({
        REDIS_URL: proxy.url,
        REDIS_PREFIX: prefix,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        LOG_ERROR_WINDOW_MS: String(WINDOW_MS),
      }),
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
    // Calls come during the outage, as clients retry: each is refused, none is logged on its own.
    const statuses: Array<[number, string | null]> = [];
    const key = `sk_${'Z'.repeat(32)}`;
    const paths = ['/v1/qr/qr?data=outage', '/v1/usage', '/v1/email-verify/verify?email=not-an-address'];
    for (let i = 0; i < 30; i += 1) {
      const response = await fetch(`${baseUrl}${paths[i % paths.length]!}`, { headers: { authorization: `Bearer ${key}` } });
      await response.arrayBuffer();
      statuses.push([response.status, response.headers.get('retry-after')]);
    }
    // The outage lasts until the counts are written, when the first window ends (the check fails without one).
    await waitUntil(() => hasCount(lines.slice(before)), WINDOW_MS + 5_000, 'a count line').catch(() => undefined);
    proxy.restore();
    expect(statuses.every(([status, retryAfter]) => status === 503 && retryAfter !== null)).toBe(true);
    expectBoundedLog(
      lines.slice(before).filter((line) => line.level >= WARN),
      cutAt,
      `gateway, ${statuses.length} calls refused`,
    );
  });
});
