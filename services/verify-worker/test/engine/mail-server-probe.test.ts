/**
 * The probe of one mail-server group against rig servers on 127.0.0.14x sharing one port:
 * harvest guards continued in new sessions within the politeness budget, temporary refusals
 * retried within the deadline, permanent ones failed over.
 */
import { describe, expect, it } from 'vitest';
import { HostLimiter } from '../../src/engine/host-limiter.ts';
import {
  MAX_SESSIONS_PER_SERVER,
  RCPT_BUDGET_FACTOR,
  probeMailServers,
  type MailServerProbeDeps,
  type ProbeOutcome,
  type ServerLimits,
} from '../../src/engine/mail-server-probe.ts';
import { findFreePort, type RigSmtpServer, type SmtpServerScript } from '@svc/testkit';
import { useRig } from '../smtp/helpers.ts';

const HOSTS = ['127.0.0.140', '127.0.0.141', '127.0.0.142'];
let port = 0;
const rig = useRig();

/** One rig server per script, on HOSTS in order, sharing one port (the prober probes one port). */
async function start(...scripts: SmtpServerScript[]): Promise<RigSmtpServer[]> {
  port = await findFreePort(HOSTS.slice(0, scripts.length));
  return Promise.all(scripts.map((script, i) => rig({ ...script, host: HOSTS[i] ?? '', port })));
}

const deps = (tuning: MailServerProbeDeps['tuning'] = {}): MailServerProbeDeps => ({
  filterTargets: (addresses) => addresses,
  limiter: new HostLimiter(2),
  session: { port, heloName: 'probe.rig.test', mailFrom: 'verify@probe.rig.test', connectTimeoutMs: 500, commandTimeoutMs: 1500 },
  tuning: { retryDelaysMs: [100, 200], minRetryTimeLeftMs: 100, slowReplyMs: 150, ...tuning },
});
const hostsOf = (count: number) => HOSTS.slice(0, count).map((ip, i) => ({ name: `mx${i}.rig.test`, addresses: [ip] }));
const run = (hostCount: number, recipients: string[], options: { deadlineMs?: number; tuning?: MailServerProbeDeps['tuning'] } = {}) => {
  const limits = new Map<string, ServerLimits>();
  const deadlineAt = Date.now() + (options.deadlineMs ?? 10_000);
  return probeMailServers(hostsOf(hostCount), recipients, deps(options.tuning), {
    signal: AbortSignal.timeout(options.deadlineMs ?? 10_000),
    deadlineAt,
    limits,
  });
};
const codes = (outcomes: Map<string, ProbeOutcome>) =>
  Object.fromEntries(
    [...outcomes].map(([recipient, outcome]) => [recipient, 'reply' in outcome ? `${outcome.kind} ${outcome.reply.code}` : outcome.kind]),
  );
const at = (...locals: string[]) => locals.map((local) => `${local}@rig.test`);
const budget = (recipients: number) => Math.floor(RCPT_BUDGET_FACTOR * recipients);

describe('probe: guards against address harvesting', () => {
  it('421 and hang-up after 2 refusals: the rest in new sessions that stop before the guard; every address answered, within budget', async () => {
    const [server] = await start({ users: at('k1', 'k2', 'k3', 'k4'), harvestGuard: { afterRejections: 2 } });
    const recipients = at('ctl', 'k1', 'x1', 'k2', 'x2', 'k3', 'x3', 'k4', 'x4');
    const outcomes = await run(1, recipients);
    expect(codes(outcomes)).toEqual(Object.fromEntries(recipients.map((r) => [r, r.startsWith('k') ? 'rcpt 250' : 'rcpt 550'])));
    expect(server!.rcptAnswered).toBeLessThanOrEqual(budget(recipients.length));
    expect(server!.sessions).toBeGreaterThan(1);
    expect(server!.sessions).toBeLessThanOrEqual(MAX_SESSIONS_PER_SERVER);
    // After the first cut, no session ran into the guard again.
    expect(server!.transcripts.slice(1).some((log) => log.some((entry) => entry.line.startsWith('421')))).toBe(false);
  });

  it('replies slowed after each refusal: new sessions instead of ever slower replies', async () => {
    const users = at('k1', 'k2', 'k3');
    const [server] = await start({ users, slowdown: { perRejectionMs: 300 } });
    const recipients = at('ctl', 'x1', 'k1', 'x2', 'k2', 'x3', 'k3');
    const outcomes = await run(1, recipients);
    expect(codes(outcomes)).toEqual(Object.fromEntries(recipients.map((r) => [r, r.startsWith('k') ? 'rcpt 250' : 'rcpt 550'])));
    expect(server!.sessions).toBeGreaterThan(1);
    expect(server!.rcptAnswered).toBeLessThanOrEqual(budget(recipients.length));
    // The server slows each reply by the refusals it made before in the connection. Once the slowing
    // was seen, later sessions end at their first refusal: no RCPT of theirs follows an unknown
    // address, so none of their replies was slowed.
    for (const log of server!.transcripts.slice(1)) {
      const sent = log
        .filter((entry) => entry.dir === 'in' && entry.line.startsWith('RCPT'))
        .map((entry) => /<(.*)>/.exec(entry.line)?.[1]);
      expect(sent.slice(0, -1).every((address) => users.includes(address ?? ''))).toBe(true);
    }
  });

  it('a recipient limit (452 4.5.3) is learnt: later sessions send no more than it', async () => {
    const [server] = await start({ catchAll: true, maxRecipients: 3 });
    const recipients = at('a', 'b', 'c', 'd', 'e', 'f', 'g');
    const outcomes = await run(1, recipients);
    expect(Object.values(codes(outcomes))).toEqual(Array<string>(7).fill('rcpt 250'));
    expect(server!.sessions).toBe(3);
    // The first flight meets the unknown limit (3 accepted, four 452s); the later sessions send 3, then 1.
    expect(server!.rcptReceived).toBe(7 + 3 + 1);
  });

  it('what the budget does not allow keeps the guard’s last word', async () => {
    // A guard that cuts after every refusal, and addresses that are all unknown: one answer per session.
    const [server] = await start({ harvestGuard: { afterRejections: 1 } });
    const recipients = at(...Array.from({ length: 12 }, (_, i) => `x${i}`));
    const outcomes = await run(1, recipients);
    expect(server!.rcptAnswered).toBeLessThanOrEqual(budget(recipients.length));
    expect(server!.sessions).toBeLessThanOrEqual(MAX_SESSIONS_PER_SERVER);
    const kinds = Object.values(codes(outcomes));
    expect(kinds.filter((kind) => kind === 'rcpt 550').length).toBe(server!.sessions);
    expect(kinds.filter((kind) => kind !== 'rcpt 550').every((kind) => kind === 'session 421')).toBe(true);
  });
});

describe("probe: the caller's say before each session", () => {
  it('is asked in the slot once per session, before it opens', async () => {
    const [server] = await start({ users: at('k1', 'k2', 'k3', 'k4'), harvestGuard: { afterRejections: 2 } });
    let asked = 0;
    const outcomes = await probeMailServers(hostsOf(1), at('ctl', 'k1', 'x1', 'k2', 'x2', 'k3', 'x3'), deps(), {
      signal: AbortSignal.timeout(10_000),
      deadlineAt: Date.now() + 10_000,
      limits: new Map(),
      beforeSession: () => {
        asked += 1;
        return Promise.resolve();
      },
    });
    expect(Object.values(codes(outcomes)).every((code) => code.startsWith('rcpt'))).toBe(true);
    expect(server!.connections).toBeGreaterThan(1);
    expect(asked).toBe(server!.connections);
  });

  it('refused (a list that ended): no session opens, and what the caller aborted ends as timeouts', async () => {
    const [server] = await start({ users: at('k1') });
    const stop = new AbortController();
    const outcomes = await probeMailServers(hostsOf(1), at('ctl', 'k1'), deps(), {
      signal: stop.signal,
      deadlineAt: Date.now() + 10_000,
      limits: new Map(),
      beforeSession: () => {
        stop.abort(new Error('list ended'));
        return Promise.reject(new Error('list ended before this session'));
      },
    });
    expect(codes(outcomes)).toEqual({ 'ctl@rig.test': 'timeout', 'k1@rig.test': 'timeout' });
    expect(server!.connections).toBe(0);
  });
});

describe('probe: refusals of the connection', () => {
  it('421 "try again later" at the greeting: retried within the deadline, and answered', async () => {
    const [server] = await start({ greetingTempfail: { connections: 2 }, users: at('k1') });
    const outcomes = await run(1, at('ctl', 'k1'));
    expect(codes(outcomes)).toEqual({ 'ctl@rig.test': 'rcpt 550', 'k1@rig.test': 'rcpt 250' });
    expect(server!.connections).toBe(3);
  });

  it('a retry is not made when the reply asks for more time than the deadline leaves', async () => {
    const [server] = await start({
      greetingTempfail: { connections: 5, reply: { code: 421, text: '4.7.0 Too busy, try again in 300 seconds' } },
    });
    const outcomes = await run(1, at('ctl', 'k1'), { deadlineMs: 3_000 });
    expect(codes(outcomes)).toEqual({ 'ctl@rig.test': 'session 421', 'k1@rig.test': 'session 421' });
    expect(server!.connections).toBe(1);
  });

  it('a permanent refusal at the greeting fails over to the next MX and is not retried', async () => {
    const [blocking, good] = await start({ banner: { code: 554, text: '5.7.1 Your IP is on our blocklist' } }, { users: at('k1') });
    const outcomes = await run(2, at('ctl', 'k1'));
    expect(codes(outcomes)).toEqual({ 'ctl@rig.test': 'rcpt 550', 'k1@rig.test': 'rcpt 250' });
    expect([blocking!.connections, good!.connections]).toEqual([1, 1]);
  });

  it('the preferred MX busy, the next one answers: no waiting for a retry', async () => {
    const [busy, good] = await start({ greetingTempfail: { connections: 9 } }, { users: at('k1') });
    const outcomes = await run(2, at('ctl', 'k1'));
    expect(codes(outcomes)).toEqual({ 'ctl@rig.test': 'rcpt 550', 'k1@rig.test': 'rcpt 250' });
    expect([busy!.connections, good!.connections]).toEqual([1, 1]);
  });

  it('every address refused by the private-address guard: nothing tried', async () => {
    const [server] = await start({ catchAll: true });
    const outcomes = await probeMailServers(
      hostsOf(1),
      at('a'),
      { ...deps(), filterTargets: () => [] },
      {
        signal: new AbortController().signal,
        deadlineAt: Date.now() + 5_000,
        limits: new Map(),
      },
    );
    expect(codes(outcomes)).toEqual({ 'a@rig.test': 'no_target' });
    expect(server!.connections).toBe(0);
  });
});
