/**
 * `npm run bench:verify`: 100 addresses over 10 domains of the loopback mail rig (servers offer
 * PIPELINING). First with each SMTP reply sent 100 ms after its command and 20 ms added to every
 * DNS answer: the batch's wall time against the critical-path lower bound, SMTP sessions per
 * domain, and RCPT commands the servers received against the minimum (each address once, plus
 * one control per domain). Then without added latency: addresses per second for one worker (its concurrency of
 * jobs at once, outcome cache off so every address is probed).
 */
import { loadConfig } from '@svc/shared';
import { createVerifier } from '@svc/verify-worker';
import { startDnsServer, type Zone, type ZoneEntry } from '@svc/testkit';
import { findFreePort, startSmtpServer, type RigSmtpServer } from '@svc/testkit';

const DOMAINS = 10;
const PER_DOMAIN = 10;
const REPLY_MS = 100;
const DNS_MS = 20;
const THROUGHPUT_S = Number(process.env.BENCH_DURATION_S ?? 10);

const hosts = Array.from({ length: DOMAINS }, (_, i) => `127.0.0.${40 + i}`);
const domain = (i: number) => `d${i}.bench.test`;
const zone: Zone = Object.fromEntries(
  hosts.flatMap((host, i): Array<[string, ZoneEntry]> => [
    [domain(i), { MX: [[10, `mx.${domain(i)}`]] }],
    [`mx.${domain(i)}`, { A: [host] }],
  ]),
);
// With the outcome cache off the same addresses can be probed again and again.
const batch = () => Array.from({ length: DOMAINS * PER_DOMAIN }, (_, n) => `u${n % PER_DOMAIN}@${domain(Math.floor(n / PER_DOMAIN))}`);
// Seven of ten mailboxes exist at every domain; the others are unknown (550 5.1.1).
const users = (i: number) => Array.from({ length: 7 }, (_, u) => `u${u}@${domain(i)}`);

async function world(replyDelayMs: number, dnsDelayMs: number) {
  const dns = await startDnsServer(zone, { delayMs: dnsDelayMs });
  const port = await findFreePort(hosts);
  const servers: RigSmtpServer[] = [];
  for (const [i, host] of hosts.entries())
    servers.push(await startSmtpServer({ host, port, pipelining: true, replyDelayMs, users: users(i) }));
  const verifier = createVerifier({
    config: loadConfig({
      VERIFY_DNS_SERVERS: dns.address,
      VERIFY_SMTP_PORT: String(port),
      VERIFY_ALLOW_PRIVATE_MX: 'true',
      VERIFY_HELO_NAME: 'bench.rig.test',
      VERIFY_RESULT_CACHE_TTL_S: '0',
    }),
  });
  return { dns, servers, verifier, close: async () => Promise.all([dns.close(), ...servers.map((server) => server.close())]) };
}

const run = (verifier: ReturnType<typeof createVerifier>, emails: string[]) =>
  verifier.verify(emails, { deadlineAt: Date.now() + 60_000, signal: new AbortController().signal });

// --- 1: latency-bound batch -------------------------------------------------------------------
{
  const { servers, verifier, close } = await world(REPLY_MS, DNS_MS);
  const started = performance.now();
  const results = await run(verifier, batch());
  const wall = performance.now() - started;
  // MX lookup, then the MX host's A lookup, then banner, EHLO, one flight of MAIL + RCPTs.
  const bound = 2 * DNS_MS + 3 * REPLY_MS;
  const sessions = servers.map((server) => server.sessions);
  const rcpts = servers.reduce((sum, server) => sum + server.rcptReceived, 0);
  const minimum = DOMAINS * (PER_DOMAIN + 1);
  console.log(`latency run: ${results.length} addresses, ${DOMAINS} domains, replies +${REPLY_MS} ms, DNS +${DNS_MS} ms`);
  console.table([
    {
      'batch wall ms': Math.round(wall),
      'lower bound ms': bound,
      'wall / bound': (wall / bound).toFixed(2),
      'sessions per domain': sessions.every((count) => count === 1) ? '1' : sessions.join(','),
      'RCPT / minimum': `${rcpts}/${minimum}`,
      verdicts: Object.entries(results.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.verdict]: (acc[r.verdict] ?? 0) + 1 }), {}))
        .map(([k, v]) => `${k}:${v}`)
        .join(' '),
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
      const results = await run(verifier, batch());
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
