/**
 * A real gateway process for the security suite: distributed mode on the test Redis (a key
 * prefix of its own, one API key), started from its entry point as production starts it, so
 * that what an attack costs is the process's own memory (read from /proc) and its own event
 * loop (timed through /healthz).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { RedisKeyStore, generateApiKey } from '@svc/gateway';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { dropPrefix, freePort, startService, testRedisUrl, uniquePrefix, waitUntil, type ServiceProcess } from '@svc/testkit';

export interface GatewayProcess {
  baseUrl: string;
  metricsUrl: string;
  key: string;
  service: ServiceProcess;
  /** Resident memory now, KiB. */
  rssKiB(): number;
  /** The highest resident memory since the last `resetPeak()` (or start), KiB. */
  peakKiB(): number;
  /** Starts a new peak from now (Linux: `5` to clear_refs resets VmHWM). */
  resetPeak(): void;
  stop(): Promise<void>;
}

const statusField = (pid: number, field: string): number => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
};

export async function startGatewayProcess(env: Record<string, string> = {}): Promise<GatewayProcess> {
  const url = testRedisUrl();
  const prefix = uniquePrefix('security');
  const key = generateApiKey();
  const redis = createRedis(url, 'request');
  await waitForRedis(redis, 5_000);
  await new RedisKeyStore(redis, prefix).create('security', key);
  redis.disconnect();
  const port = await freePort();
  const metricsPort = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const service = startService('services/gateway/src/main.ts', {
    REDIS_URL: url,
    REDIS_PREFIX: prefix,
    PORT: String(port),
    HOST: '127.0.0.1',
    GATEWAY_METRICS_PORT: String(metricsPort),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_EMAIL_VERIFY_LIST: '0',
    RATE_LIMIT_EMAIL_VERIFY_BATCH: '0',
    ...env,
  });
  const pid = service.child.pid;
  if (pid === undefined) throw new Error('the gateway did not start');
  await waitUntil(
    async () => (await fetch(`${baseUrl}/healthz`).catch(() => undefined))?.status === 200,
    30_000,
    'the gateway to answer /healthz',
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}; its output: ${service.output()}`);
  });
  return {
    baseUrl,
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    key,
    service,
    rssKiB: () => statusField(pid, 'VmRSS'),
    peakKiB: () => statusField(pid, 'VmHWM'),
    resetPeak: () => writeFileSync(`/proc/${pid}/clear_refs`, '5'),
    stop: async () => {
      await service.stop();
      await dropPrefix(url, prefix);
    },
  };
}

/**
 * One request on a connection of its own (no keep-alive pool): a pooled connection the gateway
 * closed as idle while this process was busy building a 16 MiB body would fail the request for
 * a reason that has nothing to do with what is tested.
 */
export function freshRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    outgoing.setTimeout(options.timeoutMs ?? 30_000, () => outgoing.destroy(new Error(`no answer from ${url} in time`)));
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

/** Polls `/healthz` every 50 ms while `during` runs; resolves with its result and the slowest answer's time. */
export async function healthzWhile<T>(
  baseUrl: string,
  during: () => Promise<T>,
): Promise<{ result: T; slowestMs: number; failures: number }> {
  let running = true;
  let slowestMs = 0;
  let failures = 0;
  const poller = (async () => {
    while (running) {
      const started = performance.now();
      const ok = await freshRequest(`${baseUrl}/healthz`, { timeoutMs: 10_000 }).then(
        (response) => response.status === 200,
        () => false,
      );
      slowestMs = Math.max(slowestMs, performance.now() - started);
      if (!ok) failures += 1;
      // Pacing kept on purpose: probing back to back took the CPU from the gateway under test (bombs 2-3 times slower).
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    const result = await during();
    return { result, slowestMs, failures };
  } finally {
    running = false;
    await poller;
  }
}
