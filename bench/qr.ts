/**
 * `npm run bench:qr`: GET /v1/qr/qr with a 100-character URL through the gateway, in embedded
 * mode and in distributed mode with one qr-worker (50 connections, BENCH_DURATION_S seconds each,
 * rate limits off), against the same content rendered by a bare in-process call in a loop.
 */
import autocannon from 'autocannon';
import { loadConfig } from '@svc/config';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { findRedis } from '@svc/testkit';
import { RedisKeyStore, generateApiKey } from '@svc/gateway';
import { renderQr } from '@svc/qr-worker';
import { freePort, percentile, printTable, startProcess, stopProcess, waitForOk } from './processes.ts';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = 50;
const DATA = `https://example.com/${'p'.repeat(100 - 'https://example.com/'.length)}`;
const PATH = `/v1/qr/qr?data=${encodeURIComponent(DATA)}`;

interface Row {
  [column: string]: string | number;
  setup: string;
  'req/s': number;
  'p50 ms': number;
  'p99 ms': number;
  errors: number;
}

function bareRender(): Row {
  const payload = { data: DATA, format: 'svg' as const, scale: 8, margin: 4, dark: '#000000ff', light: '#ffffffff' };
  const latencies: number[] = [];
  const until = performance.now() + DURATION_S * 1_000;
  while (performance.now() < until) {
    const started = performance.now();
    renderQr(payload);
    latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);
  return {
    setup: 'bare renderQr() loop',
    'req/s': Math.round(latencies.length / DURATION_S),
    'p50 ms': round(percentile(latencies, 50)),
    'p99 ms': round(percentile(latencies, 99)),
    errors: 0,
  };
}

const round = (value: number) => Math.round(value * 1_000) / 1_000;

async function load(setup: string, baseUrl: string, key: string): Promise<Row> {
  const result = await autocannon({
    url: `${baseUrl}${PATH}`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    headers: { authorization: `Bearer ${key}` },
  });
  return {
    setup,
    'req/s': Math.round(result.requests.average),
    'p50 ms': result.latency.p50,
    'p99 ms': result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

async function embedded(): Promise<Row> {
  const key = generateApiKey();
  const port = await freePort();
  const gateway = startProcess('scripts/start.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    API_KEYS: key,
    RATE_LIMIT_QR_GENERATE: '0',
    REDIS_URL: '',
  });
  try {
    await waitForOk(`http://127.0.0.1:${port}/readyz`);
    return await load('gateway, embedded', `http://127.0.0.1:${port}`, key);
  } finally {
    await stopProcess(gateway);
  }
}

async function distributed(): Promise<Row> {
  const redis = await findRedis();
  const prefix = `bench-${Date.now()}`;
  const key = generateApiKey();
  const client = createRedis(redis.url, 'request');
  await waitForRedis(client, 5_000);
  await new RedisKeyStore(client, prefix).create('bench', key);
  const port = await freePort();
  const env = {
    REDIS_URL: redis.url,
    REDIS_PREFIX: prefix,
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT_QR_GENERATE: '0',
    WORKER_METRICS_PORT: String(await freePort()),
  };
  const worker = startProcess('services/qr-worker/src/main.ts', env);
  const gateway = startProcess('services/gateway/src/main.ts', env);
  try {
    await waitForOk(`http://127.0.0.1:${port}/readyz`);
    return await load('gateway, distributed (1 qr-worker)', `http://127.0.0.1:${port}`, key);
  } finally {
    await stopProcess(gateway);
    await stopProcess(worker);
    const keys = await client.keys(`${prefix}:*`);
    if (keys.length > 0) await client.del(...keys);
    client.disconnect();
    await redis.stop();
  }
}

loadConfig(); // fail early on a broken environment
console.log(`QR benchmark: ${CONNECTIONS} connections, ${DURATION_S} s per setup, ${DATA.length}-character URL`);
const bare = bareRender();
const rows = [bare, await embedded(), await distributed()];
printTable(rows.map((row) => ({ ...row, 'vs bare req/s': row === bare ? '1' : (row['req/s'] / bare['req/s']).toFixed(3) })));
process.exit(0);
