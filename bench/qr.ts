/**
 * `npm run bench:qr`: the product against the do-it-yourself route and the machine's floor, in the
 * same run.
 *
 * Three servers run as separate processes, all up at once: the peer (bench/peers/qr-peer.ts:
 * fastify + node-qrcode `toString`, no auth), the product, and the floor (bench/peers/qr-floor.ts:
 * fastify answering one fixed SVG of the product's size, no QR work, no auth). Load runs go peer,
 * product, floor, peer, product, floor, ... (BENCH_PAIRS rounds, default 3) so that a noisy
 * neighbour hits all alike. Every request carries new content (a 100-character URL with a
 * counter), 50 connections, BENCH_DURATION_S seconds per run (default 10) after a BENCH_WARMUP_S
 * warm-up (default 2) of each server. BENCH_MODES picks the modes (default
 * `embedded,distributed`). BENCH_CPU_PROF_DIR, when set, has the product's processes write V8 CPU
 * profiles there (on exit).
 *
 * The product runs built, as in production (`npm run build` first, then `node
 * --conditions=production --enable-source-maps` on the built entry points). Embedded mode:
 * `scripts/dist/start.js` without Redis. Distributed mode: the gateway and one qr-worker over Redis
 * (REDIS_URL, else the local one) with an API key in a fresh key prefix. Rate limits off;
 * everything else at the product's defaults, logging included (to a discarded standard output).
 *
 * Reported per run: responses per second and server CPU per response, read from /proc as
 * utime + stime (+ waited-for children) over each server's whole process tree; in distributed
 * mode the product's CPU also counts the Redis server's delta (its /proc entry when it runs on
 * this machine, else INFO cpu). Redis's CPU during the peer's runs, when only other users can
 * be busy on it, is shown as a noise gauge. Summary: ratios per round (product against peer, and
 * the floor against both), medians with min-max.
 */
import autocannon from 'autocannon';
import { execFileSync, type ChildProcess } from 'node:child_process';
import type { Redis } from '@svc/jobs/redis';
import { loadConfig } from '@svc/config';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { childEnv, findRedis, spawnCommand, spawnNodeBuilt, type NodeProcessOptions } from '@svc/testkit';
import { RedisKeyStore, generateApiKey } from '@svc/gateway';
import { freePort, printTable, processName, processTreeCpuSeconds, startProcess, stopProcess, waitForOk } from './processes.ts';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);
/** Which modes to run: `embedded`, `distributed` or both (comma-separated). */
const MODES = (process.env.BENCH_MODES ?? 'embedded,distributed').split(',');
const CONNECTIONS = 50;
const CONTENT_LENGTH = 100;

/** Goals of the product against the peer (issue 20): throughput product/peer, CPU per request peer/product. */
const GOALS = { embedded: { throughput: 3, cpu: 3 }, distributed: { throughput: 2 } };

let contentCounter = 0;
/** A new 100-character URL on every call. */
function nextContent(): string {
  const head = `https://example.com/orders/${String(contentCounter++).padStart(10, '0')}?ref=`;
  return head + 'newsletter-spring-campaign-'.repeat(4).slice(0, CONTENT_LENGTH - head.length);
}

interface Target {
  role: 'peer' | 'product' | 'floor';
  origin: string;
  path: (data: string) => string;
  headers: Record<string, string>;
  /** CPU seconds used so far by the server side. */
  cpuSeconds: () => Promise<number>;
  /** Redis's part of cpuSeconds, when the server side includes Redis. */
  redisCpuSeconds?: () => Promise<number>;
  /** The processes whose CPU cpuSeconds adds up (gateway, worker, Redis), to show where it goes. */
  parts?: Record<string, () => Promise<number>>;
}

interface Run {
  role: Target['role'];
  requestsPerSecond: number;
  cpuPerRequestUs: number;
  redisCpuS: number | undefined;
  /** CPU seconds the other (idle) servers spent meanwhile. */
  idleOtherCpuS: number;
  /** CPU us per response of each of the target's parts, as `name us` joined. */
  split: string;
  p50Ms: number;
  p99Ms: number;
  failures: number;
}

const children: ChildProcess[] = [];
function start(script: string, env: Record<string, string>): ChildProcess {
  const child = startProcess(script, env);
  children.push(child);
  return child;
}
/** Where the product's processes write V8 CPU profiles (`--cpu-prof`), when set; NODE_OPTIONS may not carry that flag. */
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR;
/** A built entry point of the product, as `npm run start:built` runs it; logs discarded like startProcess's. */
function startBuilt(file: string, env: Record<string, string>): ChildProcess {
  const options: NodeProcessOptions = { env: childEnv({ ...env }), stdio: ['ignore', 'ignore', 'inherit'] };
  const child =
    CPU_PROF_DIR === undefined
      ? spawnNodeBuilt(file, options)
      : spawnCommand(
          process.execPath,
          ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`, '--conditions=production', '--enable-source-maps', file],
          options,
        );
  children.push(child);
  return child;
}
async function stopAll(): Promise<void> {
  await Promise.all(children.splice(0).map((child) => stopProcess(child)));
}
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

const treeCpu = (child: ChildProcess) => () => Promise.resolve(child.pid === undefined ? 0 : processTreeCpuSeconds(child.pid));

const sumCpu = async (targets: Target[]) => (await Promise.all(targets.map((target) => target.cpuSeconds()))).reduce((a, b) => a + b, 0);

async function load(target: Target, others: Target[], durationS: number): Promise<Run> {
  const otherBefore = await sumCpu(others);
  const cpuBefore = await target.cpuSeconds();
  const redisBefore = await target.redisCpuSeconds?.();
  const parts = Object.entries(target.parts ?? {});
  const partsBefore = await Promise.all(parts.map(([, read]) => read()));
  const result = await autocannon({
    url: target.origin,
    connections: CONNECTIONS,
    duration: durationS,
    headers: target.headers,
    requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: target.path(nextContent()) }) }],
  });
  const cpu = (await target.cpuSeconds()) - cpuBefore;
  const redis = redisBefore === undefined ? undefined : (await target.redisCpuSeconds!()) - redisBefore;
  const idleOther = (await sumCpu(others)) - otherBefore;
  const responses = result['2xx'];
  const partsAfter = await Promise.all(parts.map(([, read]) => read()));
  const split = parts
    .map(([name], index) => `${name} ${(((partsAfter[index]! - partsBefore[index]!) / Math.max(1, responses)) * 1e6).toFixed(0)}`)
    .join(', ');
  return {
    role: target.role,
    requestsPerSecond: responses / result.duration,
    cpuPerRequestUs: (cpu / Math.max(1, responses)) * 1e6,
    redisCpuS: redis,
    idleOtherCpuS: idleOther,
    split,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

interface Round {
  peer: Run;
  product: Run;
  floor: Run;
}

/** Warm all three up, then PAIRS interleaved rounds: peer, product, floor, peer, product, floor, ... */
async function interleaved(peer: Target, product: Target, floor: Target): Promise<Round[]> {
  const servers = [peer, product, floor];
  const run = (target: Target, durationS: number) =>
    load(
      target,
      servers.filter((other) => other !== target),
      durationS,
    );
  for (const target of servers) await run(target, WARMUP_S);
  const rounds: Round[] = [];
  for (let round = 0; round < PAIRS; round += 1) {
    rounds.push({ peer: await run(peer, DURATION_S), product: await run(product, DURATION_S), floor: await run(floor, DURATION_S) });
  }
  return rounds;
}

async function startBare(role: 'peer' | 'floor', script: string): Promise<Target> {
  const port = await freePort();
  const child = start(script, { PORT: String(port), HOST: '127.0.0.1' });
  await waitForOk(`http://127.0.0.1:${port}/qr?data=ready`);
  return {
    role,
    origin: `http://127.0.0.1:${port}`,
    path: (data) => `/qr?data=${encodeURIComponent(data)}`,
    headers: {},
    cpuSeconds: treeCpu(child),
  };
}
const startPeer = () => startBare('peer', 'bench/peers/qr-peer.ts');
const startFloor = () => startBare('floor', 'bench/peers/qr-floor.ts');

const productPath = (data: string) => `/v1/qr/qr?data=${encodeURIComponent(data)}`;

async function embedded(): Promise<Round[]> {
  const key = generateApiKey();
  const port = await freePort();
  try {
    const peer = await startPeer();
    const floor = await startFloor();
    const gateway = startBuilt('scripts/dist/start.js', {
      PORT: String(port),
      HOST: '127.0.0.1',
      API_KEYS: key,
      RATE_LIMIT_QR_GENERATE: '0',
      REDIS_URL: '',
    });
    await waitForOk(`http://127.0.0.1:${port}/readyz`);
    const product: Target = {
      role: 'product',
      origin: `http://127.0.0.1:${port}`,
      path: productPath,
      headers: { authorization: `Bearer ${key}` },
      cpuSeconds: treeCpu(gateway),
    };
    return await interleaved(peer, product, floor);
  } finally {
    await stopAll();
  }
}

/** Redis's CPU seconds: from /proc when the server runs here, else from INFO cpu. */
async function redisCpuReader(client: Redis): Promise<{ source: string; read: () => Promise<number> }> {
  const pid = Number(/process_id:(\d+)/.exec(await client.info('server'))?.[1]);
  if (Number.isInteger(pid) && processName(pid) === 'redis-server') {
    return { source: `/proc/${pid}/stat (redis-server)`, read: () => Promise.resolve(processTreeCpuSeconds(pid)) };
  }
  return {
    source: 'INFO cpu (used_cpu_user + used_cpu_sys)',
    read: async () => {
      const info = await client.info('cpu');
      const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
      return field('used_cpu_user') + field('used_cpu_sys');
    },
  };
}

async function distributed(): Promise<{ pairs: Round[]; redisSource: string }> {
  const redis = await findRedis();
  const prefix = `bench-qr-${Date.now()}`;
  const key = generateApiKey();
  const client = createRedis(redis.url, 'request');
  try {
    await waitForRedis(client, 5_000);
    await new RedisKeyStore(client, prefix).create('bench', key);
    const redisCpu = await redisCpuReader(client);
    const port = await freePort();
    const env = {
      REDIS_URL: redis.url,
      REDIS_PREFIX: prefix,
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT_QR_GENERATE: '0',
      WORKER_METRICS_PORT: String(await freePort()),
    };
    const peer = await startPeer();
    // Redis is idle for the peer: what it spends during the peer's runs is other users' load.
    peer.redisCpuSeconds = redisCpu.read;
    const floor = await startFloor();
    const worker = startBuilt('services/qr-worker/dist/main.js', env);
    const gateway = startBuilt('services/gateway/dist/main.js', env);
    await waitForOk(`http://127.0.0.1:${port}/readyz`);
    const product: Target = {
      role: 'product',
      origin: `http://127.0.0.1:${port}`,
      path: productPath,
      headers: { authorization: `Bearer ${key}` },
      cpuSeconds: async () => (await treeCpu(gateway)()) + (await treeCpu(worker)()) + (await redisCpu.read()),
      redisCpuSeconds: redisCpu.read,
      parts: { gateway: treeCpu(gateway), worker: treeCpu(worker), Redis: redisCpu.read },
    };
    return { pairs: await interleaved(peer, product, floor), redisSource: redisCpu.source };
  } finally {
    await stopAll();
    const keys = await client.keys(`${prefix}:*`);
    if (keys.length > 0) await client.del(...keys);
    client.disconnect();
    await redis.stop();
  }
}

const rounded = (value: number, digits = 0) => Number(value.toFixed(digits));
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const spread = (values: number[]) => `${median(values).toFixed(2)} (${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)})`;

function runRows(mode: string, rounds: Round[]): Array<Record<string, string | number>> {
  return rounds.flatMap((round, index) =>
    [round.peer, round.product, round.floor].map((run) => ({
      mode,
      round: index + 1,
      server: run.role,
      'req/s': rounded(run.requestsPerSecond),
      'CPU us/req': rounded(run.cpuPerRequestUs),
      'of which, us/req': run.split,
      'Redis CPU s': run.redisCpuS === undefined ? '' : rounded(run.redisCpuS, 2),
      'idle others CPU s': rounded(run.idleOtherCpuS, 2),
      'p50 ms': run.p50Ms,
      'p99 ms': run.p99Ms,
      failures: run.failures,
    })),
  );
}

/** Ratios per round, each as a median with min-max: `a/b` throughput and `b/a` CPU per request mean "a is better" above 1. */
function summaryRow(mode: string, rounds: Round[], goal: string): Record<string, string> {
  const throughput = (a: keyof Round, b: keyof Round) => spread(rounds.map((r) => r[a].requestsPerSecond / r[b].requestsPerSecond));
  const cpuSaving = (a: keyof Round, b: keyof Round) => spread(rounds.map((r) => r[b].cpuPerRequestUs / r[a].cpuPerRequestUs));
  const us = (role: keyof Round) => median(rounds.map((r) => r[role].cpuPerRequestUs)).toFixed(0);
  const rps = (role: keyof Round) => median(rounds.map((r) => r[role].requestsPerSecond)).toFixed(0);
  return {
    mode,
    'throughput product/peer': throughput('product', 'peer'),
    'CPU/req peer/product': cpuSaving('product', 'peer'),
    'throughput floor/peer': throughput('floor', 'peer'),
    'CPU/req peer/floor': cpuSaving('floor', 'peer'),
    'CPU/req product/floor': spread(rounds.map((r) => r.product.cpuPerRequestUs / r.floor.cpuPerRequestUs)),
    'req/s peer, product, floor': `${rps('peer')}, ${rps('product')}, ${rps('floor')}`,
    'CPU us/req peer, product, floor': `${us('peer')}, ${us('product')}, ${us('floor')}`,
    goal,
  };
}

loadConfig(); // fail early on a broken environment
// The product is measured as it runs in production: built (incremental, quick when up to date).
execFileSync('npm', ['run', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
console.log(
  `QR benchmark: product against the bare peer and the floor, ${PAIRS} interleaved rounds per mode, ${CONNECTIONS} connections, ` +
    `${DURATION_S} s per run after ${WARMUP_S} s warm-up, a new ${CONTENT_LENGTH}-character URL per request`,
);
const embeddedPairs = MODES.includes('embedded') ? await embedded() : [];
const { pairs: distributedPairs, redisSource } = MODES.includes('distributed') ? await distributed() : { pairs: [], redisSource: '-' };
printTable([...runRows('embedded', embeddedPairs), ...runRows('distributed', distributedPairs)]);
console.log(`Distributed product CPU = gateway tree + qr-worker tree + Redis, Redis read from ${redisSource}.`);
console.log(
  'Redis CPU during peer runs is load from other Redis users (the peer does not use Redis); ' +
    '"idle others" is what the servers not under load spent during the run (counted in no ratio).',
);
printTable([
  ...(embeddedPairs.length === 0
    ? []
    : [
        summaryRow(
          'embedded',
          embeddedPairs,
          `throughput product/peer >= ${GOALS.embedded.throughput}, CPU/req peer/product >= ${GOALS.embedded.cpu}`,
        ),
      ]),
  ...(distributedPairs.length === 0
    ? []
    : [summaryRow('distributed', distributedPairs, `throughput product/peer >= ${GOALS.distributed.throughput}`)]),
]);
const failures = [...embeddedPairs, ...distributedPairs].reduce(
  (sum, round) => sum + round.peer.failures + round.product.failures + round.floor.failures,
  0,
);
if (failures > 0) console.error(`${failures} requests failed (non-2xx, errors or timeouts): the ratios above are not trustworthy.`);
process.exit(failures > 0 ? 1 : 0);
