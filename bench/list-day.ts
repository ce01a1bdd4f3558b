/**
 * `npm run bench:list-day`: a list cleaner's 300-row list (issue 33) with greylisted and
 * unreachable entries, before and after the retry delays changed: the old default of
 * LIST_RETRY_DELAYS_S (`60,300,900`: retries 1, 6 and 21 minutes after the first pass, git
 * ac057bf) against today's default (read from the configuration). Reported per run: the time to
 * `completed`, how many greylisted mailboxes resolved (ended with their mailbox's own verdict)
 * and how many rows ended not verified (`risky` for the temporary reason they waited for).
 *
 * Time is scaled. The product's clock cannot be sped up, and the real delays would make one run
 * last 21 minutes, so every duration of the mail world and of the retry schedule is divided by
 * BENCH_TIME_SCALE (default 60: a minute is a second): LIST_RETRY_DELAYS_S `60,300,900` runs as
 * `1,5,15`, postgrey's 5-minute greylisting as 5 s. What the probes themselves take (connections,
 * replies, the first pass) is not scaled, so the report gives the measured time and a scaled-back
 * one: the first pass as measured plus the rest (the retry waits) times the scale.
 *
 * The mail world (one SMTP server per domain on 127.0.0.170-178, one port, replies 20 ms late):
 * - 240 rows on 6 ordinary domains (40 each: 28 mailboxes exist, 12 do not);
 * - 40 rows on `postgrey`, greylisting as postgrey does by default: `451 4.7.1` for a sender and
 *   recipient pair until 5 minutes after it was first seen (30 exist, 10 do not);
 * - 5 rows on `slowgrey`, a stricter greylisting of 15 minutes (4 exist, 1 does not): what a
 *   shorter retry schedule gives up;
 * - 15 rows on two domains whose mail host refuses every connection (nothing listens there).
 * The rows come shuffled, as a CRM export would have them, with a name column. The product runs
 * in embedded mode (`scripts/start.ts`, as `npm start` runs it), rate limits off, a fresh process
 * and mail world per run (greylisting remembers pairs).
 */
import type { ChildProcess } from 'node:child_process';
import { loadConfig } from '@svc/config';
import { generateApiKey } from '@svc/gateway';
import { findFreePort, startDnsServer, startSmtpServer, type RigSmtpServer, type Zone } from '@svc/testkit';
import { shuffled } from './shuffled.ts';
import { freePort, printTable, startProcess, stopProcess, waitForOk } from './processes.ts';

const SCALE = Number(process.env.BENCH_TIME_SCALE ?? 60);
/** The default before issue 33 (git ac057bf): the last retry 21 minutes after the first pass. */
const OLD_DELAYS_S = [60, 300, 900];
const NEW_DELAYS_S = loadConfig({}).LIST_RETRY_DELAYS_S;
const POSTGREY_S = 300;
const SLOWGREY_S = 900;
const REPLY_MS = 20;
const POLL_MS = 100;
const TEMPORARY_REASONS = new Set(['greylisted', 'timeout', 'no_connect', 'smtp_unavailable', 'dns_unavailable', 'throttled']);

interface Domain {
  name: string;
  host: string;
  rows: number;
  known: number;
  greylistS?: number;
  /** Nothing listens on its host: every connection is refused. */
  unreachable?: boolean;
}

const DOMAINS: Domain[] = [
  ...Array.from({ length: 6 }, (_, i): Domain => ({ name: `shop${i}.day.test`, host: `127.0.0.${170 + i}`, rows: 40, known: 28 })),
  { name: 'postgrey.day.test', host: '127.0.0.176', rows: 40, known: 30, greylistS: POSTGREY_S },
  { name: 'slowgrey.day.test', host: '127.0.0.177', rows: 5, known: 4, greylistS: SLOWGREY_S },
  { name: 'down1.day.test', host: '127.0.0.178', rows: 8, known: 0, unreachable: true },
  { name: 'down2.day.test', host: '127.0.0.178', rows: 7, known: 0, unreachable: true },
];

const rows = shuffled(
  DOMAINS.flatMap((domain) => Array.from({ length: domain.rows }, (_, k) => ({ domain, email: `p${k}@${domain.name}` }))),
  20261129,
);
const greylisted = new Set(rows.filter((row) => row.domain.greylistS !== undefined).map((row) => row.email));
const csv = ['Name,Email', ...rows.map((row, i) => `Person ${i + 1},${row.email}`)].join('\r\n') + '\r\n';

async function mailWorld() {
  const zone: Zone = {};
  for (const domain of DOMAINS) {
    zone[domain.name] = { MX: [[10, `mx.${domain.name}`]] };
    zone[`mx.${domain.name}`] = { A: [domain.host] };
  }
  const dns = await startDnsServer(zone);
  const listening = DOMAINS.filter((domain) => domain.unreachable !== true);
  const port = await findFreePort([...new Set(DOMAINS.map((domain) => domain.host))]);
  const servers: RigSmtpServer[] = [];
  for (const domain of listening)
    servers.push(
      await startSmtpServer({
        host: domain.host,
        port,
        replyDelayMs: REPLY_MS,
        users: Array.from({ length: domain.known }, (_, k) => `p${k}@${domain.name}`),
        ...(domain.greylistS === undefined ? {} : { greylist: { minDelayMs: (domain.greylistS * 1_000) / SCALE } }),
      }),
    );
  return {
    env: { ...dns.canaryEnv, VERIFY_SMTP_PORT: String(port), VERIFY_ALLOW_PRIVATE_MX: 'true', VERIFY_HELO_NAME: 'bench.rig.test' },
    close: async () => void (await Promise.all([dns.close(), ...servers.map((server) => server.close())])),
  };
}

interface ListBody {
  id: string;
  status: string;
  count: number;
  processed: number;
  waiting?: number;
}

interface Row {
  email: string;
  verdict: string | null;
  reason: string;
}

interface Run {
  delays: string;
  firstPassS: number;
  measuredS: number;
  scaledBackS: number;
  greyResolved: number;
  notVerified: number;
  summary: string;
}

async function measure(delaysS: readonly number[]): Promise<Run> {
  const scaled = delaysS.map((delay) => delay / SCALE);
  if (scaled.some((delay) => !Number.isInteger(delay))) throw new Error(`delays ${delaysS.join(',')} do not divide by ${SCALE}`);
  const world = await mailWorld();
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const key = generateApiKey();
  let child: ChildProcess | undefined;
  try {
    child = startProcess('scripts/start.ts', {
      ...world.env,
      API_KEYS: key,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      LIST_RETRY_DELAYS_S: scaled.join(','),
      RATE_LIMIT_EMAIL_VERIFY_LIST: '0',
    });
    await waitForOk(`${origin}/readyz`);
    const headers = { authorization: `Bearer ${key}` };
    const started = performance.now();
    const created = await fetch(`${origin}/v1/email-verify/lists?name=day`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/csv' },
      body: csv,
    });
    if (created.status !== 202) throw new Error(`list refused: ${created.status} ${await created.text()}`);
    const { id } = (await created.json()) as ListBody;
    let firstPassS: number | undefined;
    let list: ListBody;
    for (;;) {
      list = (await (await fetch(`${origin}/v1/email-verify/lists/${id}`, { headers })).json()) as ListBody;
      const elapsed = (performance.now() - started) / 1_000;
      // The first pass is over once only retries are left (or the list ended without any).
      if (firstPassS === undefined && (list.status === 'retrying' || list.status === 'completed')) firstPassS = elapsed;
      if (list.status === 'completed' || list.status === 'failed' || list.status === 'cancelled') break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const measuredS = (performance.now() - started) / 1_000;
    if (list.status !== 'completed') throw new Error(`list ended ${list.status}`);
    const { results } = (await (await fetch(`${origin}/v1/email-verify/lists/${id}/results?format=json`, { headers })).json()) as {
      results: Row[];
    };
    const verdicts = new Map<string, number>();
    for (const row of results) verdicts.set(row.verdict ?? 'none', (verdicts.get(row.verdict ?? 'none') ?? 0) + 1);
    const pass = firstPassS ?? measuredS;
    return {
      delays: `${delaysS.join(',')} (ran ${scaled.join(',')})`,
      firstPassS: pass,
      measuredS,
      scaledBackS: pass + (measuredS - pass) * SCALE,
      greyResolved: results.filter((row) => greylisted.has(row.email) && row.verdict !== 'risky').length,
      notVerified: results.filter((row) => row.verdict === 'risky' && TEMPORARY_REASONS.has(row.reason)).length,
      summary: [...verdicts].map(([verdict, count]) => `${verdict} ${count}`).join(', '),
    };
  } finally {
    if (child !== undefined) await stopProcess(child);
    await world.close();
  }
}

const minutes = (seconds: number) => `${Math.floor(seconds / 60)} min ${String(Math.round(seconds % 60)).padStart(2, '0')} s`;

console.log(
  `${rows.length} rows (${greylisted.size} greylisted: ${POSTGREY_S / 60} and ${SLOWGREY_S / 60} min; ` +
    `${rows.filter((row) => row.domain.unreachable === true).length} unreachable), time scaled 1/${SCALE}`,
);
const table: Array<Record<string, string | number>> = [];
for (const [label, delays] of [
  ['before', OLD_DELAYS_S],
  ['after', NEW_DELAYS_S],
] as const) {
  const run = await measure(delays);
  table.push({
    run: label,
    LIST_RETRY_DELAYS_S: run.delays,
    'first pass (s)': run.firstPassS.toFixed(1),
    'measured (s)': run.measuredS.toFixed(1),
    'scaled back': minutes(run.scaledBackS),
    'greylisted resolved': `${run.greyResolved} of ${greylisted.size}`,
    'not verified': run.notVerified,
    verdicts: run.summary,
  });
}
printTable(table);
// The same as Markdown, as README's benchmark section quotes it.
const columns = Object.keys(table[0] ?? {});
console.log(
  [columns, columns.map(() => '---'), ...table.map((row) => columns.map((column) => String(row[column])))]
    .map((cells) => `| ${cells.join(' | ')} |`)
    .join('\n'),
);
