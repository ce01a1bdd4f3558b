/**
 * `npm run bench:lists`: a 10,000-address list through the product, against the same mailboxes
 * sent through the batch route 100 at a time, as a client without lists would send them.
 *
 * The mail world: 50 domains, each with its own SMTP server on 127.0.0.100-149 (one port),
 * PIPELINING offered, every reply 50 ms after its command; 200 mailboxes per domain, 70 % known
 * and 30 % unknown (`550 5.1.1`). The addresses come shuffled, as a CRM export would have them.
 *
 * The product runs as deployed, in distributed mode: the gateway and one verify-worker process
 * over Redis (REDIS_URL, else the local one) under a fresh prefix, at its defaults but for the
 * rate limits (off: the 100 batch calls would fit the default 120 a minute anyway, and the bench
 * should measure the service, not the limiter) and the batch free allowance (0, so that both
 * routes are billed in full). Distributed mode because that is where a list's state, its chunk
 * queue and the deployment-wide session slots live in Redis as in production; `BENCH_MODE=embedded`
 * runs the one-process mode instead.
 *
 * 1. The list: uploaded as CSV, polled every 100 ms until `completed`.
 * 2. The batch route: the same local parts under a second set of domain names served by the same
 *    servers (so that neither phase profits from the other's domain cache), 100 calls of 100
 *    addresses in file order, BENCH_BATCH_CONCURRENCY (default 4, one worker's job concurrency)
 *    calls at once.
 * Reported: wall time, addresses per second, SMTP sessions per domain (min/median/max over the 50
 * servers), RCPT commands, verdicts and cost of each, and list against batches as ratios.
 */
import type { ChildProcess } from 'node:child_process';
import { CONFIG_ENV_NAMES, loadConfig } from '@svc/config';
import { RedisKeyStore, generateApiKey } from '@svc/gateway';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { createRigThrottle, findFreePort, findRedis, startDnsServer, startSmtpServer, type RigSmtpServer, type Zone } from '@svc/testkit';
import { shuffled } from './shuffled.ts';
import { freePort, printTable, startProcess, stopProcess, waitForOk } from './processes.ts';

const DOMAINS = 50;
const PER_DOMAIN = 200;
const KNOWN_PER_DOMAIN = 140;
const REPLY_MS = 50;
const BATCH = 100;
const MODE = process.env.BENCH_MODE === 'embedded' ? 'embedded' : 'distributed';
const BATCH_CONCURRENCY = Number(process.env.BENCH_BATCH_CONCURRENCY ?? 4);
const POLL_MS = 100;

type Phase = 'list' | 'batch';
const hosts = Array.from({ length: DOMAINS }, (_, i) => `127.0.0.${100 + i}`);
/**
 * The throttling provider: Gmail's MX names on three rig hosts sharing one limit of
 * THROTTLE_PER_MINUTE RCPTs per client a minute; beyond it `421-4.7.28 ... unusual rate` and a
 * close, and a block of a minute that each attempt re-arms. BENCH_THROTTLE_ADDRESSES of its
 * mailboxes (70 % known) go through each route.
 */
const THROTTLE_PER_MINUTE = 120;
const THROTTLED = Number(process.env.BENCH_THROTTLE_ADDRESSES ?? 200);
const throttleHosts = ['127.0.0.150', '127.0.0.151', '127.0.0.152'];
const GOOGLE_MX = ['gmail-smtp-in.l.google.com', 'alt1.gmail-smtp-in.l.google.com', 'alt2.gmail-smtp-in.l.google.com'];
const throttle = createRigThrottle({ perWindow: THROTTLE_PER_MINUTE, windowMs: 60_000 });
const throttledDomain = (phase: Phase) => `gm.${phase}.bench-lists.test`;
const throttledAddresses = (phase: Phase) => Array.from({ length: THROTTLED }, (_, k) => `g${k}@${throttledDomain(phase)}`);
const domain = (i: number, phase: Phase) => `d${i}.${phase}.bench-lists.test`;

/** Mailbox `u<k>` of domain `d<i>`, in file order; the phase only changes the domain's name. */
const mailboxes = shuffled(
  Array.from({ length: DOMAINS * PER_DOMAIN }, (_, n) => ({ i: Math.floor(n / PER_DOMAIN), k: n % PER_DOMAIN })),
  20261123,
);
const addresses = (phase: Phase) => mailboxes.map(({ i, k }) => `u${k}@${domain(i, phase)}`);

async function mailWorld() {
  const zone: Zone = {};
  for (const phase of ['list', 'batch'] as const)
    for (const [i, host] of hosts.entries()) {
      zone[domain(i, phase)] = { MX: [[10, `mx.${domain(i, phase)}`]] };
      zone[`mx.${domain(i, phase)}`] = { A: [host] };
    }
  for (const phase of ['list', 'batch'] as const)
    zone[throttledDomain(phase)] = { MX: GOOGLE_MX.map((name, i): [number, string] => [5 + 10 * i, name]) };
  for (const [i, name] of GOOGLE_MX.entries()) zone[name] = { A: [throttleHosts[i]!] };
  const dns = await startDnsServer(zone);
  const port = await findFreePort([...hosts, ...throttleHosts]);
  const servers: RigSmtpServer[] = [];
  for (const [i, host] of hosts.entries()) {
    const users = (['list', 'batch'] as const).flatMap((phase) =>
      Array.from({ length: KNOWN_PER_DOMAIN }, (_, k) => `u${k}@${domain(i, phase)}`),
    );
    servers.push(await startSmtpServer({ host, port, pipelining: true, replyDelayMs: REPLY_MS, users }));
  }
  const throttledUsers = (['list', 'batch'] as const).flatMap((phase) => [
    ...throttledAddresses(phase).filter((_, k) => k % 10 < 7),
    `postmaster@${throttledDomain(phase)}`,
  ]);
  const throttling: RigSmtpServer[] = [];
  for (const host of throttleHosts)
    throttling.push(await startSmtpServer({ host, port, pipelining: true, replyDelayMs: REPLY_MS, users: throttledUsers, throttle }));
  return {
    env: {
      ...dns.canaryEnv,
      VERIFY_SMTP_PORT: String(port),
      VERIFY_ALLOW_PRIVATE_MX: 'true',
      VERIFY_HELO_NAME: 'bench.rig.test',
    },
    servers,
    throttling,
    close: async () => void (await Promise.all([dns.close(), ...[...servers, ...throttling].map((server) => server.close())])),
  };
}

interface Product {
  origin: string;
  key: string;
  close(): Promise<void>;
}

const children: ChildProcess[] = [];
process.once('SIGINT', () => void Promise.all(children.splice(0).map((child) => stopProcess(child))).then(() => process.exit(130)));

async function startProduct(env: Record<string, string>): Promise<Product> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const common = {
    ...env,
    HOST: '127.0.0.1',
    PORT: String(port),
    RATE_LIMIT_EMAIL_VERIFY_BATCH: '0',
    RATE_LIMIT_EMAIL_VERIFY_LIST: '0',
    FREE_ALLOWANCE_EMAIL_VERIFY_BATCH: '0',
  };
  const key = generateApiKey();
  if (MODE === 'embedded') {
    children.push(startProcess('scripts/start.ts', { ...common, API_KEYS: key }));
    await waitForOk(`${origin}/readyz`);
    return { origin, key, close: async () => void (await Promise.all(children.splice(0).map((child) => stopProcess(child)))) };
  }
  const redis = await findRedis();
  const prefix = `bench-lists-${Date.now()}`;
  const client = createRedis(redis.url, 'request');
  await waitForRedis(client, 5_000);
  await new RedisKeyStore(client, prefix).create('bench', key);
  const distributed = { ...common, REDIS_URL: redis.url, REDIS_PREFIX: prefix };
  children.push(startProcess('services/verify-worker/src/main.ts', { ...distributed, WORKER_METRICS_PORT: '0' }));
  children.push(startProcess('services/gateway/src/main.ts', distributed));
  await waitForOk(`${origin}/readyz`);
  return {
    origin,
    key,
    close: async () => {
      await Promise.all(children.splice(0).map((child) => stopProcess(child)));
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) await client.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      client.disconnect();
      await redis.stop();
    },
  };
}

interface Verdicts {
  deliverable: number;
  risky: number;
  undeliverable: number;
}

interface Measured {
  wallS: number;
  sessions: number[];
  rcpts: number;
  verdicts: Verdicts;
  costUsd: string;
  extra: string;
}

function counting(servers: RigSmtpServer[]) {
  const before = servers.map((server) => ({ sessions: server.sessions, rcpts: server.rcptReceived }));
  return () => ({
    sessions: servers.map((server, s) => server.sessions - before[s]!.sessions),
    rcpts: servers.reduce((sum, server, s) => sum + server.rcptReceived - before[s]!.rcpts, 0),
  });
}

async function request<T>(product: Product, path: string, init: RequestInit = {}): Promise<{ body: T; headers: Headers }> {
  const response = await fetch(`${product.origin}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${product.key}`, ...init.headers },
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${text}`);
  return { body: JSON.parse(text) as T, headers: response.headers };
}

interface ListObject {
  id: string;
  status: string;
  processed: number;
  summary: Verdicts;
  costUsd: string;
}

async function listPhase(product: Product, servers: RigSmtpServer[], emails = addresses('list')): Promise<Measured> {
  const counted = counting(servers);
  const csv = `email\n${emails.join('\n')}\n`;
  const started = performance.now();
  let { body: list } = await request<ListObject>(product, '/v1/email-verify/lists?name=bench', {
    method: 'POST',
    headers: { 'content-type': 'text/csv' },
    body: csv,
  });
  const accepted = performance.now() - started;
  let firstResult: number | undefined;
  while (list.status !== 'completed') {
    if (['cancelled', 'failed'].includes(list.status)) throw new Error(`the list ended ${list.status}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    list = (await request<ListObject>(product, `/v1/email-verify/lists/${list.id}`)).body;
    if (firstResult === undefined && list.processed > 0) firstResult = performance.now() - started;
  }
  const wallS = (performance.now() - started) / 1000;
  const { sessions, rcpts } = counted();
  return {
    wallS,
    sessions,
    rcpts,
    verdicts: list.summary,
    costUsd: list.costUsd,
    extra: `202 after ${Math.round(accepted)} ms, first results after ${((firstResult ?? 0) / 1000).toFixed(1)} s`,
  };
}

interface BatchBody {
  results: Array<{ verdict: keyof Verdicts; reason: string }>;
}

async function batchPhase(product: Product, servers: RigSmtpServer[], all = addresses('batch')): Promise<Measured> {
  const counted = counting(servers);
  const batches = Array.from({ length: all.length / BATCH }, (_, b) => all.slice(b * BATCH, (b + 1) * BATCH));
  const verdicts: Verdicts = { deliverable: 0, risky: 0, undeliverable: 0 };
  const risky = new Map<string, number>();
  let costMicro = 0;
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < batches.length) {
      const emails = batches[next++]!;
      const { body, headers } = await request<BatchBody>(product, '/v1/email-verify/verify/batch', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ emails }),
      });
      for (const result of body.results) {
        verdicts[result.verdict] += 1;
        if (result.verdict === 'risky') risky.set(result.reason, (risky.get(result.reason) ?? 0) + 1);
      }
      costMicro += Math.round(Number(headers.get('x-service-cost') ?? 0) * 1e6);
    }
  };
  await Promise.all(Array.from({ length: BATCH_CONCURRENCY }, lane));
  const wallS = (performance.now() - started) / 1000;
  const { sessions, rcpts } = counted();
  return {
    wallS,
    sessions,
    rcpts,
    verdicts,
    costUsd: String(costMicro / 1e6),
    extra: `${batches.length} calls, ${BATCH_CONCURRENCY} at once${risky.size === 0 ? '' : `; risky: ${[...risky].map(([reason, n]) => `${reason} ${n}`).join(', ')}`}`,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const spread = (values: number[]) => `${Math.min(...values)} / ${median(values)} / ${Math.max(...values)}`;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

function row(route: string, measured: Measured): Record<string, string | number> {
  const { deliverable, risky, undeliverable } = measured.verdicts;
  return {
    route,
    addresses: DOMAINS * PER_DOMAIN,
    'wall s': Number(measured.wallS.toFixed(1)),
    'addresses/s': Math.round((DOMAINS * PER_DOMAIN) / measured.wallS),
    'sessions/domain min/median/max': spread(measured.sessions),
    'sessions total': sum(measured.sessions),
    'RCPT sent': measured.rcpts,
    'verdicts d/r/u': `${deliverable}/${risky}/${undeliverable}`,
    'cost $': measured.costUsd,
    notes: measured.extra,
  };
}

loadConfig(); // fail early on a broken environment
// The product's processes inherit this environment: say which of its settings it changes (LIST_WORKER_CONCURRENCY=8, say).
const overrides = CONFIG_ENV_NAMES.filter((name) => process.env[name] !== undefined && name !== 'REDIS_URL').map(
  (name) => `${name}=${process.env[name]}`,
);
const world = await mailWorld();
const product = await startProduct(world.env);
try {
  console.log(
    `Lists benchmark (${MODE} mode): ${DOMAINS * PER_DOMAIN} addresses over ${DOMAINS} rig domains, ${PER_DOMAIN} each ` +
      `(${Math.round((KNOWN_PER_DOMAIN / PER_DOMAIN) * 100)} % known), SMTP replies +${REPLY_MS} ms, PIPELINING; rate limits off, ` +
      `batch free allowance 0, ${overrides.length === 0 ? 'everything else at the product defaults' : `from this environment: ${overrides.join(' ')}`}`,
  );
  const list = await listPhase(product, world.servers);
  const batch = await batchPhase(product, world.servers);
  printTable([row('list (1 upload)', list), row(`batch route (${BATCH} a call)`, batch)]);
  const minimum = DOMAINS * PER_DOMAIN + 2 * DOMAINS;
  console.log(`RCPT minimum: every address once plus two controls per domain (random, postmaster) = ${minimum}.`);
  // The throttling provider: the batch route first (its calls meet the budget within a minute), then the list.
  const throttledRow = async (route: string, run: () => Promise<Measured>) => {
    const replies = throttle.replies;
    const whileBlocked = throttle.connectionsWhileBlocked;
    const measured = await run();
    const { deliverable, risky, undeliverable } = measured.verdicts;
    return {
      route,
      addresses: THROTTLED,
      'wall s': Number(measured.wallS.toFixed(1)),
      'addresses/s': Number((THROTTLED / measured.wallS).toFixed(2)),
      'RCPT / address (minimum)': `${(measured.rcpts / THROTTLED).toFixed(3)} (${((THROTTLED + 2) / THROTTLED).toFixed(3)})`,
      sessions: sum(measured.sessions),
      'throttle replies': throttle.replies - replies,
      'sessions while throttled': throttle.connectionsWhileBlocked - whileBlocked,
      'verdicts d/r/u': `${deliverable}/${risky}/${undeliverable}`,
    };
  };
  const throttledBatch = await throttledRow(`batch route (${BATCH} a call)`, () =>
    batchPhase(product, world.throttling, throttledAddresses('batch')),
  );
  const throttledList = await throttledRow('list (1 upload)', () => listPhase(product, world.throttling, throttledAddresses('list')));
  console.log(
    `A throttling provider (Gmail's MX names on ${throttleHosts.length} hosts, ${THROTTLE_PER_MINUTE} RCPTs a minute per client, ` +
      `then 421-4.7.28 and a block each attempt re-arms), ${THROTTLED} addresses (70 % known) through each route, at the product's default budgets:`,
  );
  printTable([throttledBatch, throttledList]);
  printTable([
    {
      'wall time, list / batches': (list.wallS / batch.wallS).toFixed(2),
      'addresses/s, list / batches': (batch.wallS / list.wallS).toFixed(2),
      'SMTP sessions, batches / list': (sum(batch.sessions) / sum(list.sessions)).toFixed(1),
      'RCPT, batches / list': (batch.rcpts / list.rcpts).toFixed(2),
    },
  ]);
} finally {
  await product.close();
  await world.close();
}
process.exit(0);
