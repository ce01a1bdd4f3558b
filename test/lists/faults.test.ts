/**
 * A list survives what operators see happen, with real processes: two verify-workers and a
 * gateway (`node` on their main.ts) on a Redis of this test's own with an append-only file.
 * Mid-list, one worker is SIGKILLed, Redis is stopped and started again from its AOF, and the
 * gateway is killed and started again. The list completes with every entry's result in input
 * order, and exactly ceil(distinct / 100) units are billed: none lost, none twice.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { freePort, spawnNode, stopProcessTree, waitUntil, childEnv } from '@svc/testkit';
import { RedisKeyStore, generateApiKey } from '@svc/gateway';
import { call } from '../support/servers.ts';
import { startMultiRig, type ListObjectBody, type MultiRig, type ResultBody } from './harness.ts';

const DISTINCT = 1_000;
const PREFIX = 'faults';

describe('list durability across process and Redis restarts', () => {
  const directory = mkdtempSync(join(tmpdir(), 'svc-list-faults-'));
  const key = generateApiKey();
  let rig: MultiRig;
  let redisPort: number;
  let redisProcess: ChildProcess | undefined;
  let gateway: ChildProcess | undefined;
  const workers: ChildProcess[] = [];
  let baseUrl: string;
  let env: Record<string, string | undefined>;
  let gatewayPort: number;

  const startRedis = async () => {
    // appendfsync always: every acknowledged write is on disk before the restart.
    redisProcess = spawn(
      'redis-server',
      [
        '--port',
        String(redisPort),
        '--bind',
        '127.0.0.1',
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--dir',
        directory,
      ],
      { stdio: 'ignore', detached: true },
    );
    const client = createRedis(`redis://127.0.0.1:${redisPort}`, 'blocking', 'faults-probe');
    await waitForRedis(client, 10_000);
    client.disconnect();
  };
  const stopRedis = async () => {
    const running = redisProcess;
    if (running === undefined || running.exitCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGTERM'); // redis-server flushes its AOF and exits
    await exited;
  };
  const startGateway = async () => {
    gateway = spawnNode('services/gateway/src/main.ts', {
      env: { ...env, PORT: String(gatewayPort) },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await waitUntil(
      async () => (await fetch(`${baseUrl}/readyz`).catch(() => undefined))?.status === 200,
      30_000,
      'the gateway to be ready',
    );
  };
  const startWorker = () => {
    workers.push(
      spawnNode('services/verify-worker/src/main.ts', {
        env: { ...env, WORKER_METRICS_PORT: '0' },
        stdio: ['ignore', 'inherit', 'inherit'],
      }),
    );
  };

  beforeAll(async () => {
    if (spawnSync('redis-server', ['--version']).error !== undefined)
      throw new Error('This test runs a Redis of its own: it needs redis-server on PATH (apt-get install redis-server).');
    // One RCPT at a time, 20 ms each: a chunk takes over two seconds, the list (one list session at a time) over twenty.
    rig = await startMultiRig({
      'sturdy.test': {
        host: '127.0.0.48',
        users: Array.from({ length: DISTINCT / 2 }, (_, i) => `m${i * 2}@sturdy.test`),
        pipelining: false,
        replyDelayMs: 20,
      },
    });
    redisPort = await freePort();
    gatewayPort = await freePort();
    baseUrl = `http://127.0.0.1:${gatewayPort}`;
    await startRedis();
    const redis = createRedis(`redis://127.0.0.1:${redisPort}`, 'request', 'faults-keys');
    await waitForRedis(redis, 5_000);
    await new RedisKeyStore(redis, PREFIX).create('faults', key);
    redis.disconnect();
    env = childEnv({
      ...rig.env,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      REDIS_PREFIX: PREFIX,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      VERIFY_RESULT_CACHE_TTL_S: '0',
      VERIFY_BATCH_DEADLINE_MS: '30000',
      // One retry round, as production has retries: a chunk's deadline counts its wait for the one
      // list session slot, and the SIGKILLed worker's slot lease holds that slot up to 15 s; a chunk
      // queued since the start can time out before it gets it, and without a retry its addresses
      // would settle as risky/timeout, never probed.
      LIST_RETRY_DELAYS_S: '1',
      VERIFY_MAX_CONNECTIONS_PER_HOST: '2',
    });
    startWorker();
    startWorker();
    await startGateway();
  }, 60_000);

  afterAll(async () => {
    for (const child of [gateway, ...workers]) if (child !== undefined) await stopProcessTree(child, { signal: 'SIGKILL' });
    if (redisProcess !== undefined && redisProcess.exitCode === null) {
      const exited = once(redisProcess, 'exit');
      redisProcess.kill('SIGKILL');
      await exited;
    }
    await rig?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const list = async (id: string): Promise<ListObjectBody | undefined> => {
    const response = await call({ baseUrl }, `/v1/email-verify/lists/${id}`, { key }).catch(() => undefined);
    return response?.status === 200 ? (response.json() as ListObjectBody) : undefined;
  };

  it('completes with every entry, billed exactly once per unit', async () => {
    const emails = [
      ...Array.from({ length: DISTINCT }, (_, i) => `m${i}@sturdy.test`),
      ...Array.from({ length: 100 }, (_, i) => `m${i * 7}@STURDY.test`), // duplicates: probed and billed once
    ];
    const created = await call({ baseUrl }, '/v1/email-verify/lists', {
      key,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ emails }),
    });
    expect(created.status).toBe(202);
    const { id } = created.json() as ListObjectBody;

    // Each fault strikes a list that is running, checked just before it. Not after the last one:
    // the workers go on while the gateway starts again, and on a loaded machine that start can
    // outlast the list's remaining work (about 20 s), so the new gateway may find it completed;
    // the end state below is what proves that nothing was lost.
    const midList = async () => {
      const state = (await list(id))!;
      expect(state.status).toBe('running');
      expect(state.processed).toBeLessThan(DISTINCT);
    };
    await waitUntil(async () => ((await list(id))?.processed ?? 0) > 0, 30_000, 'the first chunk');
    await midList();
    await stopProcessTree(workers[0]!, { signal: 'SIGKILL' });
    const afterKill = (await list(id))!.processed;
    await waitUntil(async () => ((await list(id))?.processed ?? 0) > afterKill, 40_000, 'progress on the surviving worker');

    await midList();
    await stopRedis();
    await startRedis();
    await waitUntil(async () => (await list(id)) !== undefined, 20_000, 'the gateway to read the list again');

    await midList();
    await stopProcessTree(gateway!, { signal: 'SIGKILL' });
    startWorker(); // the orchestrator replaces the killed worker
    await startGateway();

    await waitUntil(async () => (await list(id))?.status === 'completed', 120_000, 'the list to complete');
    const done = (await list(id))!;
    expect(done).toMatchObject({ count: DISTINCT + 100, distinct: DISTINCT, processed: DISTINCT + 100 });
    expect(done.summary.deliverable + done.summary.risky + done.summary.undeliverable).toBe(DISTINCT + 100);

    const results = (await call({ baseUrl }, `/v1/email-verify/lists/${id}/results`, { key })).json() as {
      pending: number;
      results: ResultBody[];
    };
    expect(results.pending).toBe(0);
    expect(results.results.map((result) => result.email)).toEqual(emails);
    const verdictOf = (i: number) => (i % 2 === 0 ? 'deliverable' : 'undeliverable');
    // Each entry whose verdict differs, with the reason it got (a chunk that came out `risky` says why).
    const wrong = results.results
      .slice(0, DISTINCT)
      .flatMap((result, i) => (result.verdict === verdictOf(i) ? [] : [`${i} ${result.email}: ${result.verdict} (${result.reason})`]));
    expect(wrong).toEqual([]);

    const usage = (await call({ baseUrl }, '/v1/usage', { key })).json() as {
      operations: Record<string, { calls: number; billableCalls: number }>;
    };
    expect(usage.operations['email-verify.list']).toMatchObject({ calls: DISTINCT / 100, billableCalls: DISTINCT / 100 - 10 });
    expect(done.costUsd).toBe('0');
  }, 240_000);
});
