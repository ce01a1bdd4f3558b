/**
 * `npm run bench:cluster [-- qr|verify]`: the distributed product on one Redis against the same on a
 * 3-primary Redis Cluster, in one interleaved run (issue 17's benchmark; reported, not gated).
 *
 * Both back ends are started here as `redis-server` processes on free ports, without persistence:
 * one Redis, and a cluster of 3 primaries (BENCH_CLUSTER_REPLICAS=1 adds a replica to each; their
 * CPU then counts too) made by the test kit's `startRedisCluster`. On each runs one stack built as
 * production runs it (`npm run build` first): the gateway and one worker (qr-worker for `qr`,
 * verify-worker for `verify`), rate limits off, everything else at the product's defaults, logging
 * included (to a discarded standard output). Both stacks are up at once and load runs alternate
 * single, cluster, single, cluster, ... (BENCH_PAIRS rounds, default 3) after a BENCH_WARMUP_S
 * warm-up of each (default 2), BENCH_DURATION_S seconds per run (default 5), so that a noisy
 * neighbour hits both alike.
 *
 * Workloads, one job per request:
 * - `qr`: GET /v1/qr/qr with a new 100-character URL per request, 50 connections.
 * - `verify`: GET /v1/email-verify/verify of one address of the loopback mail rig (10 domains on
 *   127.0.0.40-49, PIPELINING, no added latency, 7 of 10 mailboxes known), the worker's outcome
 *   cache off so that every request is probed, 16 connections (BENCH_VERIFY_CONNECTIONS). The
 *   rig's DNS and SMTP servers run in this process, beside the load generator.
 *
 * Per run: responses per second, and CPU per response split between gateway, worker and Redis,
 * each read from /proc/<pid>/stat (utime + stime, + waited-for children) before and after the run:
 * the gateway's and worker's process trees, and every redis-server of the topology under load.
 * Redis CPU per job gives "jobs per second per Redis core" (1 / Redis CPU-seconds per job): where
 * one Redis, single-threaded, saturates; for the cluster the busiest node's share says where the
 * first of its cores saturates. Summary: medians with min-max over the rounds, cluster/single
 * ratios per round. Every process started here is stopped on exit, failure, Ctrl-C or SIGTERM.
 */
import autocannon from 'autocannon';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@svc/config';
import { RedisKeyStore, generateApiKey } from '@svc/gateway';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import {
  childEnv,
  findFreePort,
  redisCommand,
  spawnNodeBuilt,
  startBinary,
  startDnsServer,
  startRedisCluster,
  startSmtpServer,
  waitUntil,
  type RigSmtpServer,
  type Zone,
  type ZoneEntry,
} from '@svc/testkit';
import { freePort, printTable, processName, processTreeCpuSeconds, stopProcess, waitForOk } from './processes.ts';

type Workload = 'qr' | 'verify';
type Topology = 'single' | 'cluster';

const WORKLOADS: Workload[] = (() => {
  const named = process.argv.slice(2).filter((arg): arg is Workload => arg === 'qr' || arg === 'verify');
  return named.length > 0 ? named : ['qr', 'verify'];
})();
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);
const REPLICAS = process.env.BENCH_CLUSTER_REPLICAS === '1' ? 1 : 0;
const CONNECTIONS: Record<Workload, number> = { qr: 50, verify: Number(process.env.BENCH_VERIFY_CONNECTIONS ?? 16) };
const CONTENT_LENGTH = 100;

// --- cleanup: every process and rig started here is stopped, whatever happens ---------------------
const closers: Array<() => Promise<unknown>> = [];
async function closeAll(): Promise<void> {
  // Last started, first stopped: the product's processes before the Redis they use.
  for (const close of closers.splice(0).reverse()) await close().catch((error: unknown) => console.error('cleanup:', error));
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void closeAll().then(() => process.exit(signal === 'SIGINT' ? 130 : 143)));

function startBuilt(file: string, env: Record<string, string>): ChildProcess {
  const child = spawnNodeBuilt(file, { env: childEnv(env), stdio: ['ignore', 'ignore', 'inherit'] });
  closers.push(() => stopProcess(child));
  return child;
}

const cpuOf = (pid: number | undefined) => () => (pid === undefined ? 0 : processTreeCpuSeconds(pid));

// --- the two back ends ---------------------------------------------------------------------------
interface Backend {
  topology: Topology;
  env: Record<string, string>;
  /** One CPU reader per redis-server process, named by port. */
  redis: Array<{ name: string; cpu: () => number }>;
}

const REDIS_ARGS = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'];

function redisReader(port: number, pid: number | undefined): { name: string; cpu: () => number } {
  if (pid === undefined || processName(pid) !== 'redis-server') throw new Error(`no redis-server process for port ${port}`);
  return { name: String(port), cpu: cpuOf(pid) };
}

async function singleRedis(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-single-'));
  const port = await freePort();
  const server = startBinary('redis-server', ['--port', String(port), '--dir', dir, ...REDIS_ARGS]);
  closers.push(async () => {
    await server.stop(1_000);
    rmSync(dir, { recursive: true, force: true });
  });
  await waitUntil(
    () =>
      redisCommand(port, ['PING']).then(
        (reply) => reply === 'PONG',
        () => false,
      ),
    10_000,
    `redis-server on ${port}`,
  );
  return { topology: 'single', env: { REDIS_URL: `redis://127.0.0.1:${port}` }, redis: [redisReader(port, server.child.pid)] };
}

async function clusterRedis(): Promise<Backend> {
  // A node timeout of Redis's default (15 s), not the tests' 1 s: on a busy shared machine a
  // primary slow to answer the cluster bus must not be marked failed mid-run.
  const rig = await startRedisCluster({ primaries: 3, replicas: REPLICAS, nodeTimeoutMs: 15_000 });
  closers.push(() => rig.close());
  return { topology: 'cluster', env: rig.env, redis: rig.nodes.map((node) => redisReader(node.port, node.process.child.pid)) };
}

// --- the mail rig for `verify` -------------------------------------------------------------------
const DOMAINS = 10;
const PER_DOMAIN = 10;
const KNOWN = 7;
const mailHosts = Array.from({ length: DOMAINS }, (_, i) => `127.0.0.${40 + i}`);
const mailDomain = (i: number) => `d${i}.bench-cluster.test`;

async function mailWorld(): Promise<Record<string, string>> {
  const zone: Zone = Object.fromEntries(
    mailHosts.flatMap((host, i): Array<[string, ZoneEntry]> => [
      [mailDomain(i), { MX: [[10, `mx.${mailDomain(i)}`]] }],
      [`mx.${mailDomain(i)}`, { A: [host] }],
    ]),
  );
  const dns = await startDnsServer(zone);
  closers.push(() => dns.close());
  const port = await findFreePort(mailHosts);
  const servers: RigSmtpServer[] = [];
  for (const [i, host] of mailHosts.entries()) {
    const users = Array.from({ length: KNOWN }, (_, u) => `u${u}@${mailDomain(i)}`);
    const server = await startSmtpServer({ host, port, pipelining: true, replyDelayMs: 0, users });
    closers.push(() => server.close());
    servers.push(server);
  }
  return {
    ...dns.canaryEnv,
    VERIFY_SMTP_PORT: String(port),
    VERIFY_ALLOW_PRIVATE_MX: 'true',
    VERIFY_HELO_NAME: 'bench.rig.test',
    VERIFY_RESULT_CACHE_TTL_S: '0',
  };
}

// --- one product stack per back end ---------------------------------------------------------------
interface Stack {
  backend: Backend;
  origin: string;
  key: string;
  gateway: () => number;
  worker: () => number;
}

async function startStack(workload: Workload, backend: Backend, extraEnv: Record<string, string>): Promise<Stack> {
  const prefix = `bench-cluster-${workload}`;
  const key = generateApiKey();
  const client = createRedis(loadConfig({ ...backend.env, REDIS_PREFIX: prefix }).redis!, 'request');
  try {
    await waitForRedis(client, 10_000);
    await new RedisKeyStore(client, prefix).create('bench', key);
  } finally {
    client.disconnect();
  }
  const port = await freePort();
  const env = {
    ...extraEnv,
    ...backend.env,
    REDIS_PREFIX: prefix,
    HOST: '127.0.0.1',
    PORT: String(port),
    RATE_LIMIT_QR_GENERATE: '0',
    RATE_LIMIT_EMAIL_VERIFY_SINGLE: '0',
    WORKER_METRICS_PORT: String(await freePort()),
  };
  const worker = startBuilt(`services/${workload === 'qr' ? 'qr-worker' : 'verify-worker'}/dist/main.js`, env);
  const gateway = startBuilt('services/gateway/dist/main.js', env);
  const origin = `http://127.0.0.1:${port}`;
  await waitForOk(`${origin}/readyz`);
  return { backend, origin, key, gateway: cpuOf(gateway.pid), worker: cpuOf(worker.pid) };
}

// --- load runs -------------------------------------------------------------------------------------
let counter = 0;
function nextPath(workload: Workload): string {
  const n = counter++;
  if (workload === 'verify')
    return `/v1/email-verify/verify?email=${encodeURIComponent(`u${n % PER_DOMAIN}@${mailDomain(Math.floor(n / PER_DOMAIN) % DOMAINS)}`)}`;
  const head = `https://example.com/orders/${String(n).padStart(10, '0')}?ref=`;
  return `/v1/qr/qr?data=${encodeURIComponent(head + 'newsletter-spring-campaign-'.repeat(4).slice(0, CONTENT_LENGTH - head.length))}`;
}

interface Run {
  topology: Topology;
  jobsPerSecond: number;
  /** CPU microseconds per answered request. */
  gatewayUs: number;
  workerUs: number;
  redisUs: number;
  /** Each redis-server's part of the Redis CPU, in node order. */
  redisShares: number[];
  /** CPU seconds the idle stack (and its Redis) spent meanwhile: a noise gauge, counted nowhere. */
  idleCpuS: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
}

const stackCpu = (stack: Stack) => stack.gateway() + stack.worker() + stack.backend.redis.reduce((sum, node) => sum + node.cpu(), 0);

async function load(workload: Workload, stack: Stack, idle: Stack, durationS: number): Promise<Run> {
  const idleBefore = stackCpu(idle);
  const before = { gateway: stack.gateway(), worker: stack.worker(), redis: stack.backend.redis.map((node) => node.cpu()) };
  const result = await autocannon({
    url: stack.origin,
    connections: CONNECTIONS[workload],
    duration: durationS,
    headers: { authorization: `Bearer ${stack.key}` },
    requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: nextPath(workload) }) }],
  });
  const redis = stack.backend.redis.map((node, index) => node.cpu() - before.redis[index]!);
  const redisTotal = redis.reduce((a, b) => a + b, 0);
  const answered = Math.max(1, result['2xx']);
  const us = (seconds: number) => (seconds / answered) * 1e6;
  return {
    topology: stack.backend.topology,
    jobsPerSecond: result['2xx'] / result.duration,
    gatewayUs: us(stack.gateway() - before.gateway),
    workerUs: us(stack.worker() - before.worker),
    redisUs: us(redisTotal),
    redisShares: redis.map((cpu) => cpu / Math.max(redisTotal, 1e-9)),
    idleCpuS: stackCpu(idle) - idleBefore,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

interface Round {
  single: Run;
  cluster: Run;
}

async function interleaved(workload: Workload, single: Stack, cluster: Stack): Promise<Round[]> {
  await load(workload, single, cluster, WARMUP_S);
  await load(workload, cluster, single, WARMUP_S);
  const rounds: Round[] = [];
  for (let round = 0; round < PAIRS; round += 1) {
    const singleRun = await load(workload, single, cluster, DURATION_S);
    rounds.push({ single: singleRun, cluster: await load(workload, cluster, single, DURATION_S) });
  }
  return rounds;
}

async function benchmark(workload: Workload): Promise<Round[]> {
  try {
    const extraEnv = workload === 'verify' ? await mailWorld() : {};
    const single = await startStack(workload, await singleRedis(), extraEnv);
    const cluster = await startStack(workload, await clusterRedis(), extraEnv);
    return await interleaved(workload, single, cluster);
  } finally {
    await closeAll();
  }
}

// --- report ----------------------------------------------------------------------------------------
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const spread = (values: number[], digits = 0) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)})`;
const totalUs = (run: Run) => run.gatewayUs + run.workerUs + run.redisUs;
const percent = (shares: number[]) => shares.map((share) => `${Math.round(share * 100)}`).join('/');

function runRows(workload: Workload, rounds: Round[]): Array<Record<string, string | number>> {
  return rounds.flatMap((round, index) =>
    [round.single, round.cluster].map((run) => ({
      workload,
      round: index + 1,
      Redis: run.topology,
      'jobs/s': Math.round(run.jobsPerSecond),
      'CPU us/job': Math.round(totalUs(run)),
      'gateway/worker/Redis us': `${Math.round(run.gatewayUs)}/${Math.round(run.workerUs)}/${Math.round(run.redisUs)}`,
      'Redis CPU % per node': percent(run.redisShares),
      'idle stack CPU s': Number(run.idleCpuS.toFixed(2)),
      'p50 ms': run.p50Ms,
      'p99 ms': run.p99Ms,
      failures: run.failures,
    })),
  );
}

function summaryRows(workload: Workload, rounds: Round[]): Array<Record<string, string>> {
  return (['single', 'cluster'] as const).map((topology) => {
    const runs = rounds.map((round) => round[topology]);
    // The busiest node's CPU per job: the first Redis core to saturate, at 1e6 / that jobs per second.
    const busiestUs = runs.map((run) => run.redisUs * Math.max(...run.redisShares));
    return {
      workload,
      Redis: topology === 'single' ? 'one node' : `3 primaries${REPLICAS === 1 ? ' + 3 replicas' : ''}`,
      'jobs/s': spread(runs.map((run) => run.jobsPerSecond)),
      'CPU us/job': spread(runs.map(totalUs)),
      'gateway us': spread(runs.map((run) => run.gatewayUs)),
      'worker us': spread(runs.map((run) => run.workerUs)),
      'Redis us (all nodes)': spread(runs.map((run) => run.redisUs)),
      'busiest node us': spread(busiestUs),
      'jobs/s per busiest Redis core': spread(busiestUs.map((us) => 1e6 / us)),
      'jobs/s per Redis core (all nodes)': spread(runs.map((run) => 1e6 / run.redisUs)),
    };
  });
}

function ratioRow(workload: Workload, rounds: Round[]): Record<string, string> {
  const ratio = (pick: (run: Run) => number) =>
    spread(
      rounds.map((round) => pick(round.cluster) / pick(round.single)),
      2,
    );
  return {
    workload,
    'throughput cluster/single': ratio((run) => run.jobsPerSecond),
    'CPU/job cluster/single': ratio(totalUs),
    'gateway CPU/job cluster/single': ratio((run) => run.gatewayUs),
    'worker CPU/job cluster/single': ratio((run) => run.workerUs),
    'Redis CPU/job cluster/single': ratio((run) => run.redisUs),
  };
}

loadConfig(); // fail early on a broken environment
execFileSync('npm', ['run', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
console.log(
  `Cluster benchmark (${WORKLOADS.join(', ')}): the built gateway + one worker on one Redis and on a 3-primary cluster` +
    `${REPLICAS === 1 ? ' with a replica each' : ' (no replicas)'}, ${PAIRS} interleaved rounds, ${DURATION_S} s per run after ` +
    `${WARMUP_S} s warm-up; connections: ${WORKLOADS.map((w) => `${w} ${CONNECTIONS[w]}`).join(', ')}`,
);
const results: Array<[Workload, Round[]]> = [];
for (const workload of WORKLOADS) results.push([workload, await benchmark(workload)]);
printTable(results.flatMap(([workload, rounds]) => runRows(workload, rounds)));
console.log('Per-run CPU from /proc/<pid>/stat; "idle stack" is what the other topology\'s stack spent meanwhile (counted nowhere).');
printTable(results.flatMap(([workload, rounds]) => summaryRows(workload, rounds)));
printTable(results.map(([workload, rounds]) => ratioRow(workload, rounds)));
console.log(
  'Medians (min-max) over the rounds. One Redis is one core: it saturates near "jobs/s per busiest Redis core"; ' +
    'a cluster saturates when its busiest node does.',
);
const failures = results.reduce(
  (sum, [, rounds]) => sum + rounds.reduce((inner, round) => inner + round.single.failures + round.cluster.failures, 0),
  0,
);
if (failures > 0) console.error(`${failures} requests failed (non-2xx, errors or timeouts): the figures above are not trustworthy.`);
process.exit(failures > 0 ? 1 : 0);
