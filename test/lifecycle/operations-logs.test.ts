/**
 * What an operator reads in the log of a real distributed gateway process: a 504 at the deadline
 * is one `warn` line with its code and request id and no stack; the 503s of a Redis outage are
 * one such line per kind and 10 s, with a count (every refused call is in the access log); a bug (a job that fails) is an `error` line with the request id and the stack;
 * Redis going away is logged with the connection's name, once per kind of error, however many
 * reconnect attempts the outage brings. A failed job is logged by its worker with job id,
 * request id and queue.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERIFY_JOB } from '@svc/contracts';
import { registerHandler } from '@svc/jobs';
import { startBullWorker, type Worker } from '@svc/jobs/bullmq';
import { createRedis, type Redis } from '@svc/jobs/redis';
import { RedisKeyStore, generateApiKey } from '@svc/gateway';
import { createLogger } from '@svc/telemetry';
import {
  dropPrefix,
  spawnNode,
  startTcpProxy,
  stopProcessTree,
  testRedisUrl,
  uniquePrefix,
  waitUntil,
  type TcpProxy,
  childEnv,
} from '@svc/testkit';
import { call } from '../support/servers.ts';

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  code?: string;
  err?: { stack?: string };
  [field: string]: unknown;
}

const WARN = 40;
const ERROR = 50;
const parseLines = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

describe('a distributed gateway process, its log', () => {
  const prefix = uniquePrefix('ops-logs');
  const key = generateApiKey();
  let redis: Redis;
  let proxy: TcpProxy;
  let gateway: ChildProcess;
  let output = '';
  let baseUrl = '';
  let worker: Worker;
  const workerLog: string[] = [];

  beforeAll(async () => {
    redis = createRedis(testRedisUrl(), 'blocking', 'ops-logs-test');
    await new RedisKeyStore(redis, prefix).create('ops', key);
    proxy = await startTcpProxy(testRedisUrl());
    gateway = spawnNode('services/gateway/src/main.ts', {
      env: childEnv({
        REDIS_URL: proxy.url,
        REDIS_PREFIX: prefix,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        REQUEST_DEADLINE_MS: '1000',
      }),
    });
    gateway.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitUntil(() => parseLines(output).some((line) => line.msg === 'gateway listening'), 30_000, 'the gateway');
    baseUrl = String(parseLines(output).find((line) => line.msg === 'gateway listening')?.address);
    // A verify worker whose every job fails (a bug), logging to this test; no QR worker at all.
    const failing = registerHandler(VERIFY_JOB, () => Promise.reject(new Error('handler bug')));
    const logger = createLogger('info', 'verify-worker', { write: (line: string) => void workerLog.push(line) });
    worker = startBullWorker(failing, { redis: testRedisUrl(), redisPrefix: prefix, concurrency: 1, logger });
  });
  afterAll(async () => {
    proxy?.restore();
    if (gateway !== undefined) await stopProcessTree(gateway);
    await worker?.close();
    await proxy?.close();
    await dropPrefix(testRedisUrl(), prefix);
    redis?.disconnect();
  });

  it(
    '504 at warn without a stack, a bug at error with its stack, 503 refusals and Redis errors once per kind',
    { timeout: 40_000 },
    async () => {
      const timeout = await call({ baseUrl }, '/v1/qr/qr?data=nobody', { key });
      const bug = await call({ baseUrl }, '/v1/email-verify/verify?email=a%40b.co', { key });
      expect([timeout.status, bug.status]).toEqual([504, 500]);

      proxy.cut();
      const refused: string[] = [];
      for (let i = 0; i < 15; i += 1) {
        const response = await call({ baseUrl }, '/v1/qr/qr?data=outage', { key });
        expect(response.status).toBe(503);
        refused.push(response.headers.get('x-request-id') ?? '');
      }
      // Nothing happens: Redis clients retry at 0.1, 0.3, 0.7 s (redis.ts `reconnect`) and write no second line of a kind.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      proxy.restore();
      await stopProcessTree(gateway);
      const lines = parseLines(output);

      const byRequest = (id: string | null) => lines.filter((line) => line.reqId === id && line.code !== undefined);
      const [timeoutLine] = byRequest(timeout.headers.get('x-request-id'));
      expect(timeoutLine).toMatchObject({ level: WARN, code: 'timeout' });
      expect(JSON.stringify(timeoutLine)).not.toContain('stack');
      const [bugLine] = byRequest(bug.headers.get('x-request-id'));
      expect(bugLine).toMatchObject({ level: ERROR, code: 'internal_error' });
      expect(bugLine?.err?.stack).toContain('Error');
      // Every refused call is in the access log with its id and status; the refusal itself is a
      // backend error, written once for the outage (at most once per 10 s, with a count), not once per call.
      for (const id of refused) expect(lines.filter((line) => line.reqId === id && line.statusCode === 503)).toHaveLength(1);
      const refusals = lines.filter((line) => line.code === 'service_unavailable');
      expect(refusals).toHaveLength(1);
      expect(refusals[0]).toMatchObject({ level: WARN, reqId: refused[0] });
      expect(JSON.stringify(refusals[0])).not.toContain('stack');

      const redisErrors = lines.filter((line) => line.msg === 'Redis error' || line.msg.endsWith(' error'));
      const kinds = new Set(
        redisErrors.map((line) => `${String(line.component)} ${String(line.connection ?? line.queue)} ${JSON.stringify(line.err)}`),
      );
      console.log(`[operations-logs] ${redisErrors.length} Redis/queue error lines over the outage: ${[...kinds].join(' | ')}`);
      expect(redisErrors.length).toBeGreaterThan(0);
      for (const line of redisErrors) expect(line).toMatchObject({ level: ERROR, component: expect.any(String) });
      // Once per kind (component, connection or queue, error) within the minute.
      const perKind = new Map<string, number>();
      for (const line of redisErrors) {
        const kind = `${String(line.component)}:${String(line.connection ?? line.queue)}:${String((line.err as { code?: string } | undefined)?.code ?? (line.err as { message?: string } | undefined)?.message)}`;
        perKind.set(kind, (perKind.get(kind) ?? 0) + 1);
      }
      expect(
        [...perKind.values()].every((count) => count === 1),
        JSON.stringify([...perKind]),
      ).toBe(true);
    },
  );

  it('a failed job is logged by its worker with job id, request id and queue', () => {
    const failed = workerLog.map((line) => JSON.parse(line) as LogLine).filter((line) => line.msg === 'job failed');
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]).toMatchObject({
      level: WARN,
      queue: 'verify',
      jobId: expect.any(String),
      requestId: expect.any(String),
      reason: 'handler bug',
    });
  });
});
