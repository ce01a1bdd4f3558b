/**
 * The verifier against servers that use time on purpose or guard against address harvesting,
 * and its politeness measured: sessions per domain, RCPTs per address, sessions per server.
 */
import { describe, expect, it } from 'vitest';
import type { Zone } from '@svc/testkit';
import { RCPT_BUDGET_FACTOR } from '../../src/engine/mail-server-probe.ts';
import { mailDomain, useWorld, verdicts } from './world.ts';

const known = (domain: string, ...locals: string[]) => locals.map((local) => `${local}@${domain}`);
/** Six domains, each with its own MX name, all on one server. */
const shared: Zone = Object.fromEntries(
  Array.from({ length: 6 }, (_, i) => Object.entries(mailDomain(`s${i}.test`, '127.0.0.110'))).flat(),
);

const world = useWorld(
  {
    ...mailDomain('pause.test', '127.0.0.100'),
    ...mailDomain('busy.test', '127.0.0.101'),
    ...mailDomain('later.test', '127.0.0.102'),
    ...mailDomain('guard.test', '127.0.0.103'),
    ...mailDomain('slow.test', '127.0.0.104'),
    ...mailDomain('utf8.test', '127.0.0.105'),
    ...mailDomain('ascii.test', '127.0.0.106'),
    ...mailDomain('grey.test', '127.0.0.107'),
    ...mailDomain('honest.test', '127.0.0.108'),
    ...mailDomain('p1.test', '127.0.0.111'),
    ...mailDomain('p2.test', '127.0.0.112'),
    ...mailDomain('p3.test', '127.0.0.113'),
    ...shared,
  },
  {
    // Postscreen-style greeting pause: longer than the connect timeout the test sets.
    '127.0.0.100': { greetingPauseMs: 600, users: known('pause.test', 'ann') },
    '127.0.0.101': { greetingTempfail: { connections: 1 }, users: known('busy.test', 'ann') },
    '127.0.0.102': {
      greetingTempfail: { connections: 99, reply: { code: 421, text: '4.7.0 Too many connections, try again in 300 seconds' } },
    },
    '127.0.0.103': { users: known('guard.test', 'k1', 'k2', 'k3', 'k4'), harvestGuard: { afterRejections: 2 } },
    '127.0.0.104': { users: known('slow.test', 'k1', 'k2', 'k3'), slowdown: { perRejectionMs: 300 } },
    '127.0.0.105': { smtputf8: true, users: ['josé@utf8.test'] },
    '127.0.0.106': { users: ['ann@ascii.test'] },
    '127.0.0.107': {
      users: known('grey.test', 'ann'),
      mailboxes: { 'ann@grey.test': { code: 451, text: '4.7.1 Greylisted for 5 minutes' } },
    },
    // Slow but honest: a greeting pause, slow replies, and every RCPT answered one by one, late.
    '127.0.0.108': {
      greetingPauseMs: 400,
      replyDelayMs: 200,
      tarpit: { at: 'rcpt', delayMs: 250, serial: true },
      users: known('honest.test', 'k1', 'k2'),
    },
    '127.0.0.110': { catchAll: false, users: known('s0.test', 'a'), replyDelayMs: 150 },
    '127.0.0.111': { users: known('p1.test', 'a', 'b') },
    '127.0.0.112': { users: known('p2.test', 'a') },
    '127.0.0.113': { users: known('p3.test', 'a', 'b', 'c') },
  },
);

describe('timing servers use on purpose', () => {
  it('a 600 ms greeting pause with a 200 ms connect timeout: the greeting has the command timeout, nothing said early', async () => {
    const results = await world.run(['ann@pause.test', 'bob@pause.test'], {
      VERIFY_CONNECT_TIMEOUT_MS: '200',
      VERIFY_COMMAND_TIMEOUT_MS: '1500',
    });
    expect(verdicts(results)).toEqual({ 'ann@pause.test': 'deliverable/accepted_email', 'bob@pause.test': 'undeliverable/rejected_email' });
    expect(world.smtp.get('127.0.0.100')!.earlyTalkers).toBe(0);
  });

  it('slow but honest (greeting pause, slow replies, a tarpit on every RCPT): waited out in one session, not cut', async () => {
    const server = world.smtp.get('127.0.0.108')!;
    const emails = known('honest.test', 'k1', 'x1', 'k2', 'x2');
    const results = await world.run(emails, {
      VERIFY_CONNECT_TIMEOUT_MS: '200',
      VERIFY_COMMAND_TIMEOUT_MS: '1500',
      VERIFY_BATCH_DEADLINE_MS: '8000',
    });
    expect(Object.values(verdicts(results))).toEqual([
      'deliverable/accepted_email',
      'undeliverable/rejected_email',
      'deliverable/accepted_email',
      'undeliverable/rejected_email',
    ]);
    expect(server.sessions).toBe(1);
  });

  it('421 "try again later" at the greeting of the only MX: retried within the deadline', async () => {
    const server = world.smtp.get('127.0.0.101')!;
    expect(verdicts(await world.run(['ann@busy.test']))).toEqual({ 'ann@busy.test': 'deliverable/accepted_email' });
    expect(server.connections).toBe(2);
  });

  // "Too many connections" is a throttle (decisions, "Politeness at volume"): the provider backs off.
  it('a throttle asking for more time than the batch has: risky/throttled, temporary, with the delay it asked for', async () => {
    const server = world.smtp.get('127.0.0.102')!;
    const outcomes = await world
      .verifier()
      .verifyDetailed(['ann@later.test'], { deadlineAt: Date.now() + 30_000, signal: new AbortController().signal });
    expect(outcomes).toEqual([
      expect.objectContaining({
        result: expect.objectContaining({ verdict: 'risky', reason: 'throttled' }),
        temporary: true,
        retryAfterSeconds: 300,
      }),
    ]);
    expect(server.connections).toBe(1);
  });

  it('greylisting at RCPT: temporary, with the delay the reply states, for a later retry', async () => {
    const [outcome] = await world
      .verifier()
      .verifyDetailed(['ann@grey.test'], { deadlineAt: Date.now() + 30_000, signal: new AbortController().signal });
    expect(outcome).toMatchObject({ result: { verdict: 'risky', reason: 'greylisted' }, temporary: true, retryAfterSeconds: 300 });
  });
});

describe('guards against address harvesting', () => {
  it('421 and hang-up after 2 refusals: every address settled right, in a few polite sessions', async () => {
    const server = world.smtp.get('127.0.0.103')!;
    const emails = [...known('guard.test', 'k1', 'k2', 'k3', 'k4'), ...known('guard.test', 'x1', 'x2', 'x3')];
    const results = await world.run(emails);
    expect(Object.values(verdicts(results))).toEqual([
      ...Array<string>(4).fill('deliverable/accepted_email'),
      ...Array<string>(3).fill('undeliverable/rejected_email'),
    ]);
    expect(server.sessions).toBeGreaterThan(1);
    expect(server.rcptAnswered).toBeLessThanOrEqual(Math.floor(RCPT_BUDGET_FACTOR * (emails.length + 1)));
  });

  it('replies slowed after each refusal: settled right in fresh sessions', async () => {
    const emails = [...known('slow.test', 'k1', 'k2', 'k3'), ...known('slow.test', 'x1', 'x2')];
    const results = await world.run(emails, { VERIFY_COMMAND_TIMEOUT_MS: '3000' });
    expect(Object.values(verdicts(results))).toEqual([
      ...Array<string>(3).fill('deliverable/accepted_email'),
      ...Array<string>(2).fill('undeliverable/rejected_email'),
    ]);
  });

  it('what the deadline does not allow is risky/timeout, answered in time', async () => {
    const emails = [...known('slow.test', 'k1'), ...known('slow.test', 'x1', 'x2', 'x3', 'x4', 'x5')];
    const results = await world.run(
      emails,
      { VERIFY_BATCH_DEADLINE_MS: '900', VERIFY_COMMAND_TIMEOUT_MS: '3000' },
      { slowReplyMs: 10_000 },
    );
    const reasons = new Set(results.map((result) => result.reason));
    expect(reasons.has('timeout')).toBe(true);
    expect(results.every((result) => result.verdict !== 'deliverable' || result.reason === 'accepted_email')).toBe(true);
  });
});

describe('internationalised addresses', () => {
  it('a UTF-8 local part is asked with SMTPUTF8 where offered, and is risky elsewhere, never sent raw', async () => {
    const results = await world.run(['josé@utf8.test', 'josé@ascii.test', 'ann@ascii.test']);
    expect(verdicts(results)).toEqual({
      'josé@utf8.test': 'deliverable/accepted_email',
      'josé@ascii.test': 'risky/unexpected_error',
      'ann@ascii.test': 'deliverable/accepted_email',
    });
    expect(results[1]?.checks.smtp).toBeNull();
    expect(world.smtp.get('127.0.0.105')!.commands.flat()).toContain('MAIL FROM:<verify@probe.rig.test> SMTPUTF8');
    expect(
      world.smtp
        .get('127.0.0.106')!
        .commands.flat()
        .some((line) => /[^\x20-\x7e]/.test(line)),
    ).toBe(false);
  });
});

describe('politeness, measured', () => {
  it('one session per domain and exactly one RCPT per address plus two controls per domain (random, postmaster)', async () => {
    const servers = ['127.0.0.111', '127.0.0.112', '127.0.0.113'].map((ip) => world.smtp.get(ip)!);
    const emails = [...known('p1.test', 'a', 'b', 'z'), ...known('p2.test', 'a'), ...known('p3.test', 'a', 'b', 'c', 'y', 'z')];
    const before = servers.map((server) => [server.sessions, server.rcptReceived]);
    await world.run(emails);
    const used = servers.map((server, i) => [server.sessions - before[i]![0]!, server.rcptReceived - before[i]![1]!]);
    expect(used).toEqual([
      [1, 3 + 2],
      [1, 1 + 2],
      [1, 5 + 2],
    ]);
  });

  it('never more than VERIFY_MAX_CONNECTIONS_PER_HOST sessions at once to one server, whatever the domains', async () => {
    const server = world.smtp.get('127.0.0.110')!;
    const emails = Array.from({ length: 6 }, (_, i) => `a@s${i}.test`);
    const results = await world.run(emails, { VERIFY_MAX_CONNECTIONS_PER_HOST: '2' });
    expect(results).toHaveLength(6);
    expect(server.sessions).toBe(6); // six MX names, six groups: one session each
    expect(server.maxOpen).toBeLessThanOrEqual(2);
    expect(server.maxOpen).toBe(2);
  });
});
