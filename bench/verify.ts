/**
 * `npm run bench:verify`: 100 addresses over 10 domains of the loopback mail rig (servers offer
 * PIPELINING).
 *
 * 1. Latency: each SMTP reply sent 100 ms after its command, 20 ms added to every DNS answer.
 *    Reported: the batch's wall time against the critical-path lower bound, SMTP sessions per
 *    domain, and RCPT commands the servers received against the minimum (each address once,
 *    plus two controls per domain: the random one and postmaster). A worker runs for hours, so the first (cold) batch is shown
 *    apart; then RUNS batches of one long-lived verifier are timed, each on domain names of its
 *    own so that each does its DNS lookups, and the median is the figure.
 * 2. Throughput without added latency: addresses per second for one worker (its concurrency of
 *    jobs at once, outcome cache off so every address is probed).
 */
import { loadConfig } from '@svc/config';
import { createVerifier } from '@svc/verify-worker';
import { findFreePort, startDnsServer, startSmtpServer, type RigSmtpServer, type Zone, type ZoneEntry } from '@svc/testkit';

const DOMAINS = 10;
const PER_DOMAIN = 10;
const REPLY_MS = 100;
const DNS_MS = 20;
const THROUGHPUT_S = Number(process.env.BENCH_DURATION_S ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const hosts = Array.from({ length: DOMAINS }, (_, i) => `127.0.0.${40 + i}`);
/** Domain i of run r: every run has names of its own, served by the same ten servers. */
const domain = (i: number, run: number) => `d${i}.r${run}.bench.test`;
const zone: Zone = Object.fromEntries(
  Array.from({ length: RUNS + 1 }, (_, run) =>
    hosts.flatMap((host, i): Array<[string, ZoneEntry]> => [
      [domain(i, run), { MX: [[10, `mx.${domain(i, run)}`]] }],
      [`mx.${domain(i, run)}`, { A: [host] }],
    ]),
  ).flat(),
);
// With the outcome cache off the same addresses can be probed again and again.
const batch = (run: number) =>
  Array.from({ length: DOMAINS * PER_DOMAIN }, (_, n) => `u${n % PER_DOMAIN}@${domain(Math.floor(n / PER_DOMAIN), run)}`);
// Seven of ten mailboxes exist at every domain; the others are unknown (550 5.1.1).
const users = (i: number) =>
  Array.from({ length: RUNS + 1 }, (_, run) => Array.from({ length: 7 }, (_, u) => `u${u}@${domain(i, run)}`)).flat();

async function world(replyDelayMs: number, dnsDelayMs: number) {
  const dns = await startDnsServer(zone, { delayMs: dnsDelayMs });
  const port = await findFreePort(hosts);
  const servers: RigSmtpServer[] = [];
  for (const [i, host] of hosts.entries())
    servers.push(await startSmtpServer({ host, port, pipelining: true, replyDelayMs, users: users(i) }));
  const verifier = createVerifier({
    config: loadConfig({
      ...dns.canaryEnv,
      VERIFY_SMTP_PORT: String(port),
      VERIFY_ALLOW_PRIVATE_MX: 'true',
      VERIFY_HELO_NAME: 'bench.rig.test',
      VERIFY_RESULT_CACHE_TTL_S: '0',
    }),
  });
  return { servers, verifier, close: async () => Promise.all([dns.close(), ...servers.map((server) => server.close())]) };
}

const run = (verifier: ReturnType<typeof createVerifier>, emails: string[]) =>
  verifier.verify(emails, { deadlineAt: Date.now() + 60_000, signal: new AbortController().signal });
const count = <T extends string>(values: T[]) =>
  Object.entries(values.reduce<Record<string, number>>((acc, value) => ({ ...acc, [value]: (acc[value] ?? 0) + 1 }), {}))
    .map(([key, n]) => `${key}:${n}`)
    .join(' ');

// --- 1: latency-bound batch -------------------------------------------------------------------
{
  const { servers, verifier, close } = await world(REPLY_MS, DNS_MS);
  // MX lookup, then the MX host's A lookup, then banner, EHLO, one flight of MAIL + RCPTs.
  const bound = 2 * DNS_MS + 3 * REPLY_MS;
  const minimum = DOMAINS * (PER_DOMAIN + 2);
  const runs: Array<{ wall: number; sessions: number[]; rcpts: number; verdicts: string }> = [];
  for (let r = 0; r <= RUNS; r++) {
    const before = servers.map((server) => ({ sessions: server.sessions, rcpts: server.rcptReceived }));
    const started = performance.now();
    const results = await run(verifier, batch(r));
    const wall = performance.now() - started;
    runs.push({
      wall,
      sessions: servers.map((server, s) => server.sessions - (before[s]?.sessions ?? 0)),
      rcpts: servers.reduce((sum, server, s) => sum + server.rcptReceived - (before[s]?.rcpts ?? 0), 0),
      verdicts: count(results.map((result) => result.verdict)),
    });
  }
  const [cold, ...warm] = runs;
  const walls = warm.map((r) => r.wall).sort((a, b) => a - b);
  const median = walls[Math.floor(walls.length / 2)] ?? Number.NaN;
  console.log(`latency run: ${DOMAINS * PER_DOMAIN} addresses, ${DOMAINS} domains, replies +${REPLY_MS} ms, DNS +${DNS_MS} ms`);
  console.table([
    {
      'cold batch ms': Math.round(cold?.wall ?? Number.NaN),
      [`median of ${RUNS} ms`]: Math.round(median),
      'best ms': Math.round(walls[0] ?? Number.NaN),
      'lower bound ms': bound,
      'wall / bound': (median / bound).toFixed(2),
      'sessions per domain': runs.every((r) => r.sessions.every((n) => n === 1)) ? '1' : runs.map((r) => r.sessions.join(',')).join(' '),
      'RCPT / minimum':
        runs.map((r) => `${r.rcpts}/${minimum}`).find((figure) => figure !== `${minimum}/${minimum}`) ?? `${minimum}/${minimum}`,
      verdicts: cold?.verdicts ?? '',
    },
  ]);
  await close();
}

// --- 2: throughput without added latency ------------------------------------------------------
{
  const { verifier, close } = await world(0, 0);
  const concurrency = loadConfig().VERIFY_WORKER_CONCURRENCY;
  const until = performance.now() + THROUGHPUT_S * 1_000;
  let addresses = 0;
  const lane = async () => {
    while (performance.now() < until) {
      const results = await run(verifier, batch(0));
      addresses += results.length;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  const seconds = (performance.now() - started) / 1_000;
  console.log(`throughput run: one worker, ${concurrency} batches at once, no added latency, cache off`);
  console.table([{ addresses: addresses, seconds: seconds.toFixed(1), 'addresses/s': Math.round(addresses / seconds) }]);
  await close();
}
process.exit(0);
