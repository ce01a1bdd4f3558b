/**
 * A soak of the built product (issue 32): its processes under a steady mixed load for minutes,
 * their memory sampled as it goes, so that what each keeps per request shows as a slope.
 *
 * The product runs as shipped (`dist`, `--conditions=production`): in distributed mode the
 * gateway, a qr-worker and a verify-worker over Redis (REDIS_URL, else a Redis of its own, under
 * a fresh prefix deleted afterwards); in embedded mode the one process of `npm run start:built`.
 * Verification talks to a scripted mail world on loopback (testkit's DNS and SMTP servers).
 *
 * The load, open-loop at fixed rates: QR codes (`GET /v1/qr/qr`, a new text each), batches of
 * 20 new addresses, a list of new addresses every so often, MCP tool calls (`qr_wifi` over raw
 * JSON-RPC). Every sample (each SAMPLE_S): each process's RSS, and its heap in use after a forced
 * full collection, read through a probe preloaded into the process by the soak alone
 * (memory-probe.mjs: `--expose-gc`, a loopback endpoint that collects and answers
 * `process.memoryUsage()`); and Redis's `used_memory` and key count.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RedisKeyStore, generateApiKey } from '@svc/gateway';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { childEnv, dropPrefix, findRedis, freePort, spawnCommand, startMailRig, stopProcessTree, type MailRig } from '@svc/testkit';

export type SoakMode = 'distributed' | 'embedded';

export interface SoakOptions {
  mode: SoakMode;
  durationS: number;
  sampleS: number;
  qrPerS: number;
  /** Batches of 20 new addresses a second. */
  batchesPerS: number;
  /** A list every so many seconds (0: none), of `listSize` new addresses. */
  listEveryS: number;
  listSize: number;
  /** A tool call every so many seconds (0: none). */
  toolEveryS: number;
  log?: (line: string) => void;
}

export interface ProcessSample {
  rss: number;
  heapUsed: number;
}

export interface Sample {
  atS: number;
  /** Requests answered so far (all kinds). */
  requests: number;
  processes: Record<string, ProcessSample | undefined>;
  redis?: { usedMemory: number; keys: number };
}

export interface SoakResult {
  mode: SoakMode;
  samples: Sample[];
  answered: Record<string, number>;
  failed: Record<string, number>;
  statuses: Record<string, number>;
}

const PROBE = fileURLToPath(new URL('./memory-probe.mjs', import.meta.url));
const DOMAIN = 'soak.test';
const MAX_IN_FLIGHT = 64;

interface Started {
  name: string;
  child: ChildProcess;
  probePort: number;
}

async function startBuilt(name: string, file: string, env: Record<string, string>): Promise<Started> {
  const probePort = await freePort();
  const child = spawnCommand(
    process.execPath,
    ['--expose-gc', '--import', PROBE, '--conditions=production', '--enable-source-maps', file],
    { env: childEnv({ ...env, SOAK_PROBE_PORT: String(probePort), LOG_LEVEL: 'warn' }), stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return { name, child, probePort };
}

async function waitForOk(url: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (
      (await fetch(url).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

async function probe(port: number): Promise<ProcessSample | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(10_000) });
    const body = (await response.json()) as { rss?: unknown; heapUsed?: unknown };
    return typeof body.rss === 'number' && typeof body.heapUsed === 'number' ? { rss: body.rss, heapUsed: body.heapUsed } : undefined;
  } catch {
    return undefined;
  }
}

async function redisMemory(client: Redis): Promise<{ usedMemory: number; keys: number }> {
  const info = await client.info('memory');
  return { usedMemory: Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? 0), keys: await client.dbsize() };
}

/** Runs one soak and answers its samples; every process it started is stopped before it returns. */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const started: Started[] = [];
  const key = generateApiKey();
  const rig: MailRig = await startMailRig(DOMAIN, '127.0.0.1', ['known0', 'known1', 'known2']);
  let redis: Awaited<ReturnType<typeof findRedis>> | undefined;
  let client: Redis | undefined;
  const prefix = `soak-${Date.now()}`;
  try {
    const port = await freePort();
    const common = {
      ...rig.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT_QR_GENERATE: '0',
      RATE_LIMIT_QR_WIFI: '0',
      RATE_LIMIT_EMAIL_VERIFY_BATCH: '0',
      RATE_LIMIT_EMAIL_VERIFY_SINGLE: '0',
      RATE_LIMIT_EMAIL_VERIFY_LIST: '0',
      LIST_MAX_ACTIVE_PER_KEY: '1000',
      LIST_ALLOW_PRIVATE_CALLBACKS: 'true',
    };
    if (options.mode === 'distributed') {
      redis = await findRedis();
      client = createRedis(redis.url, 'request', 'soak');
      await waitForRedis(client, 5_000);
      await new RedisKeyStore(client, prefix).create('soak', key);
      const env = { ...common, REDIS_URL: redis.url, REDIS_PREFIX: prefix };
      started.push(
        await startBuilt('qr-worker', 'services/qr-worker/dist/main.js', { ...env, WORKER_METRICS_PORT: String(await freePort()) }),
      );
      started.push(
        await startBuilt('verify-worker', 'services/verify-worker/dist/main.js', { ...env, WORKER_METRICS_PORT: String(await freePort()) }),
      );
      started.push(
        await startBuilt('gateway', 'services/gateway/dist/main.js', { ...env, GATEWAY_METRICS_PORT: String(await freePort()) }),
      );
    } else {
      started.push(await startBuilt('embedded', 'scripts/dist/start.js', { ...common, API_KEYS: key, REDIS_URL: '' }));
    }
    const origin = `http://127.0.0.1:${port}`;
    await waitForOk(`${origin}/readyz`);
    log(`soak ${options.mode}: ${started.map((s) => `${s.name} pid ${s.child.pid}`).join(', ')}; ${options.durationS} s`);
    return await drive(options, origin, key, started, client, log);
  } finally {
    await Promise.all(started.map((s) => stopProcessTree(s.child)));
    client?.disconnect();
    if (redis !== undefined) await dropPrefix(redis.url, prefix);
    await redis?.stop();
    await rig.close();
  }
}

async function drive(
  options: SoakOptions,
  origin: string,
  key: string,
  started: Started[],
  client: Redis | undefined,
  log: (line: string) => void,
): Promise<SoakResult> {
  const answered: Record<string, number> = {};
  const failed: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  const auth = { authorization: `Bearer ${key}` };
  let inFlight = 0;
  let serial = 0;
  let requests = 0;
  const pending = new Set<Promise<void>>();
  const send = (kind: string, path: string, init: RequestInit = {}) => {
    if (inFlight >= MAX_IN_FLIGHT) {
      failed[`${kind}:skipped`] = (failed[`${kind}:skipped`] ?? 0) + 1;
      return;
    }
    inFlight += 1;
    const done = fetch(`${origin}${path}`, { ...init, headers: { ...auth, ...(init.headers ?? {}) }, signal: AbortSignal.timeout(60_000) })
      .then(async (response) => {
        await response.arrayBuffer();
        statuses[`${kind} ${response.status}`] = (statuses[`${kind} ${response.status}`] ?? 0) + 1;
        if (response.ok) answered[kind] = (answered[kind] ?? 0) + 1;
        else failed[kind] = (failed[kind] ?? 0) + 1;
      })
      .catch(() => void (failed[kind] = (failed[kind] ?? 0) + 1))
      .finally(() => {
        inFlight -= 1;
        requests += 1;
        pending.delete(done);
      });
    pending.add(done);
  };
  const json = (body: unknown): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const address = () => {
    serial += 1;
    return serial % 10 === 0 ? `known${serial % 3}@${DOMAIN}` : `u${serial}.${Date.now().toString(36)}@${DOMAIN}`;
  };

  const samples: Sample[] = [];
  const startedAt = Date.now();
  const sample = async () => {
    const processes: Record<string, ProcessSample | undefined> = {};
    for (const s of started) processes[s.name] = await probe(s.probePort);
    const redis = client === undefined ? undefined : await redisMemory(client);
    samples.push({ atS: (Date.now() - startedAt) / 1_000, requests, processes, ...(redis === undefined ? {} : { redis }) });
  };
  await sample();

  const TICK_MS = 100;
  const due = { qr: 0, batch: 0, list: 0, tool: 0 };
  const endAt = startedAt + options.durationS * 1_000;
  let nextSampleAt = startedAt + options.sampleS * 1_000;
  while (Date.now() < endAt) {
    const tickS = TICK_MS / 1_000;
    due.qr += options.qrPerS * tickS;
    due.batch += options.batchesPerS * tickS;
    due.list += options.listEveryS > 0 ? tickS / options.listEveryS : 0;
    due.tool += options.toolEveryS > 0 ? tickS / options.toolEveryS : 0;
    for (; due.qr >= 1; due.qr -= 1) send('qr', `/v1/qr/qr?data=${encodeURIComponent(`soak ${(serial += 1)} ${'x'.repeat(40)}`)}`);
    for (; due.batch >= 1; due.batch -= 1)
      send('batch', '/v1/email-verify/verify/batch', json({ emails: Array.from({ length: 20 }, address) }));
    for (; due.list >= 1; due.list -= 1)
      send('list', '/v1/email-verify/lists', json({ emails: Array.from({ length: options.listSize }, address) }));
    for (; due.tool >= 1; due.tool -= 1)
      send('tool', '/api/mcp/qr', {
        ...json({
          jsonrpc: '2.0',
          id: (serial += 1),
          method: 'tools/call',
          params: { name: 'qr_wifi', arguments: { ssid: `soak-${serial}`, security: 'nopass' } },
        }),
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      });
    if (Date.now() >= nextSampleAt) {
      nextSampleAt += options.sampleS * 1_000;
      await sample();
      const last = samples.at(-1)!;
      log(
        `t=${last.atS.toFixed(0)} s requests=${last.requests} ` +
          Object.entries(last.processes)
            .map(([name, p]) => `${name} rss=${mb(p?.rss)} heap=${mb(p?.heapUsed)}`)
            .join(' ') +
          (last.redis === undefined ? '' : ` redis=${mb(last.redis.usedMemory)} keys=${last.redis.keys}`),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  await Promise.all(pending);
  await sample();
  return { mode: options.mode, samples, answered, failed, statuses };
}

export const mb = (bytes: number | undefined): string => (bytes === undefined ? '-' : (bytes / 2 ** 20).toFixed(1));
