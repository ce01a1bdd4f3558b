/**
 * The verifier against a scripted mail world on loopback: a DNS server and SMTP servers on
 * 127.0.0.x sharing one port, each behaving like a kind of internet mail server.
 */
import { describe, expect, it } from 'vitest';
import type { VerifyResult } from '@svc/contracts';
import type { Zone } from '@svc/testkit';
import { mailDomain, useWorld } from './world.ts';

const ZONE: Zone = {
  ...mailDomain('normal.test', '127.0.0.2'),
  'xn--bcher-kva.test': { MX: [[10, 'mx.normal.test']] },
  ...mailDomain('catchall.test', '127.0.0.3'),
  'implicit.test': { A: ['127.0.0.4'] },
  'nullmx.test': { MX: 'null' },
  'servfail.test': { behaviour: 'servfail' },
  ...mailDomain('greylist.test', '127.0.0.5'),
  ...mailDomain('policy.test', '127.0.0.6'),
  // The preferred MX refuses connections (nothing listens on 127.0.0.7): fail over to the next.
  ...mailDomain('failover.test', '127.0.0.7', '127.0.0.2'),
  ...mailDomain('many.test', '127.0.0.9'),
  ...mailDomain('drop.test', '127.0.0.10'),
  ...mailDomain('tls.test', '127.0.0.11'),
  // The preferred MX answers 421 at the banner: the next one by preference takes over.
  ...mailDomain('busy.test', '127.0.0.12', '127.0.0.2'),
  ...mailDomain('tarpit.test', '127.0.0.8'),
};

const world = useWorld(ZONE, {
  '127.0.0.2': {
    users: ['alice@normal.test', 'bob@normal.test', 'dave@failover.test', 'bea@busy.test', 'erin@xn--bcher-kva.test'],
    mailboxes: { 'full@normal.test': 'full', 'gone@normal.test': 'disabled' },
  },
  '127.0.0.3': { catchAll: true },
  '127.0.0.4': { users: ['carol@implicit.test'] },
  '127.0.0.5': { greylist: true, users: ['gus@greylist.test'] },
  '127.0.0.6': { rcptReply: { code: 550, text: '5.7.1 Client host blocked using zen.spamhaus.org' } },
  '127.0.0.8': { tarpit: { at: 'rcpt' } },
  '127.0.0.9': {
    maxRecipients: 3,
    catchAll: false,
    users: ['m0@many.test', 'm1@many.test', 'm2@many.test', 'm3@many.test', 'm4@many.test', 'm5@many.test'],
  },
  '127.0.0.10': { dropAfterRcpts: 2, users: ['d0@drop.test', 'd1@drop.test', 'd2@drop.test', 'd3@drop.test'] },
  '127.0.0.11': { starttls: 'required', users: ['tls@tls.test'] },
  '127.0.0.12': { banner: { code: 421, text: '4.3.2 Too busy, try later' } },
});

describe('verifier in the scripted mail world', () => {
  const { smtp } = world;
  // The prober's own tuning, as deployed (the other world tests shorten its retries and slow-reply threshold).
  const run = (emails: string[], env?: Record<string, string>) => world.run(emails, env, {});
  const byEmail = (results: VerifyResult[]) => new Map(results.map((result) => [result.email, result]));

  it('classifies every kind of answer, keeps input order and echoes entries as submitted', async () => {
    const emails = [
      'alice@normal.test',
      'nobody@normal.test',
      'full@normal.test',
      'gone@normal.test',
      'anyone@catchall.test',
      'carol@implicit.test',
      'x@nullmx.test',
      'x@nowhere.test',
      'x@servfail.test',
      'gus@greylist.test',
      'pat@policy.test',
      'dave@failover.test',
      'not an address',
      'info@normal.test',
    ];
    const results = await run(emails);
    expect(results.map((result) => result.email)).toEqual(emails);
    const got = Object.fromEntries(results.map((result) => [result.email, `${result.verdict}/${result.reason}`]));
    expect(got).toEqual({
      'alice@normal.test': 'deliverable/accepted_email',
      'nobody@normal.test': 'undeliverable/rejected_email',
      'full@normal.test': 'risky/mailbox_full',
      'gone@normal.test': 'undeliverable/mailbox_disabled',
      'anyone@catchall.test': 'risky/accept_all',
      'carol@implicit.test': 'deliverable/accepted_email',
      'x@nullmx.test': 'undeliverable/invalid_domain',
      'x@nowhere.test': 'undeliverable/invalid_domain',
      'x@servfail.test': 'risky/unexpected_error',
      'gus@greylist.test': 'risky/greylisted',
      'pat@policy.test': 'risky/smtp_blocked',
      'dave@failover.test': 'deliverable/accepted_email',
      'not an address': 'undeliverable/invalid_syntax',
      'info@normal.test': 'undeliverable/rejected_email',
    });
    const alice = byEmail(results).get('alice@normal.test')!;
    expect(alice.checks).toEqual({
      syntax: true,
      domainExists: true,
      mx: ['mx.normal.test'],
      smtp: 'accepted',
      catchAll: false,
      disposable: false,
      role: false,
      free: false,
      provider: null,
    });
    expect(alice.score).toBeGreaterThanOrEqual(80);
    expect(byEmail(results).get('anyone@catchall.test')!.checks.catchAll).toBe(true);
    expect(byEmail(results).get('x@nowhere.test')!.checks.domainExists).toBe(false);
    expect(byEmail(results).get('not an address')!.score).toBe(0);
  });

  it('one batch to one domain opens one SMTP session; duplicates and case variants are probed once', async () => {
    const server = smtp.get('127.0.0.2')!;
    const before = server.sessions;
    const emails = [
      'bob@normal.test',
      ' bob@NORMAL.test',
      'bob@normal.test',
      ...Array.from({ length: 20 }, (_, i) => `user${i}@normal.test`),
    ];
    const results = await run(emails);
    expect(server.sessions - before).toBe(1);
    expect(results).toHaveLength(emails.length);
    expect(results[1]!.email).toBe(' bob@NORMAL.test');
    expect(results[1]!.verdict).toBe('deliverable');
    const rcpts = server.commands.at(-1)!.filter((command) => command.startsWith('RCPT TO:'));
    expect(rcpts.filter((command) => command.toLowerCase().includes('bob@normal.test'))).toHaveLength(1);
    expect(rcpts).toHaveLength(23); // 21 distinct addresses, the catch-all control and postmaster
  });

  it('452 4.5.3 after 3 RCPTs and a connection dropped mid-session: the rest go in new sessions', async () => {
    const many = smtp.get('127.0.0.9')!;
    const before = many.sessions;
    const manyResults = await run(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'zz'].map((local) => `${local}@many.test`));
    expect(manyResults.map((result) => result.verdict)).toEqual([...Array<string>(6).fill('deliverable'), 'undeliverable']);
    expect(many.sessions - before).toBe(3); // 8 RCPTs (7 + catch-all probe), 3 per transaction

    const dropResults = await run(['d0', 'd1', 'd2', 'd3'].map((local) => `${local}@drop.test`));
    expect(dropResults.every((result) => result.verdict === 'deliverable')).toBe(true);
  });

  it('STARTTLS required before MAIL: the probe upgrades (self-signed certificate) and gets its answer', async () => {
    const [result] = await run(['tls@tls.test']);
    expect(result).toMatchObject({ verdict: 'deliverable', reason: 'accepted_email' });
    expect(
      smtp
        .get('127.0.0.11')!
        .transcripts.at(-1)!
        .some((entry) => entry.tls),
    ).toBe(true);
  });

  it('421 at the banner of the preferred MX: fails over to the next by preference', async () => {
    const [result] = await run(['bea@busy.test']);
    expect(result).toMatchObject({ verdict: 'deliverable', checks: { mx: ['mx1.busy.test', 'mx2.busy.test'] } });
  });

  it('a repeated address costs no second probe (outcome cache)', async () => {
    const server = smtp.get('127.0.0.4')!;
    const verify = world.verifier({ VERIFY_RESULT_CACHE_TTL_S: '3600' }, {});
    const options = () => ({ deadlineAt: Date.now() + 10_000, signal: new AbortController().signal });
    await verify.verify(['carol@implicit.test'], options());
    const sessions = server.sessions;
    const [again] = await verify.verify(['carol@implicit.test'], options());
    expect(again).toMatchObject({ verdict: 'deliverable' });
    expect(server.sessions).toBe(sessions);
  });

  it('an IDN domain is probed under its A-label', async () => {
    const [result] = await run(['erin@bücher.test']);
    expect(result).toMatchObject({ email: 'erin@bücher.test', verdict: 'deliverable' });
  });

  it('an injection attempt never reaches a server', async () => {
    const server = smtp.get('127.0.0.2')!;
    const results = await run(['alice@normal.test\r\nRCPT TO:<evil@normal.test>', 'alice@normal.test>\r\nDATA']);
    expect(results.every((result) => result.reason === 'invalid_syntax')).toBe(true);
    expect(server.commands.flat().some((command) => /evil|^DATA/.test(command))).toBe(false);
  });

  it('a tarpit is cut off at the batch deadline: risky/timeout, answered in time', async () => {
    const server = smtp.get('127.0.0.8')!;
    const commandTimeoutMs = 60_000;
    const started = Date.now();
    const [result] = await run(['t@tarpit.test'], {
      VERIFY_COMMAND_TIMEOUT_MS: String(commandTimeoutMs),
      VERIFY_BATCH_DEADLINE_MS: '1500',
    });
    expect(result).toMatchObject({ verdict: 'risky', reason: 'timeout' });
    // The 1.5 s deadline ended the wait for the RCPT reply, not the 60 s command timeout; the prober hung up.
    expect(Date.now() - started).toBeLessThan(commandTimeoutMs / 4);
    expect(server.commands.at(-1)?.some((line) => line.startsWith('RCPT'))).toBe(true);
    await expect.poll(() => server.open).toBe(0);
  });

  it('the caller’s signal ends the batch as the deadline does: risky/timeout, and the prober hangs up', async () => {
    const server = smtp.get('127.0.0.8')!;
    const verify = world.verifier({ VERIFY_COMMAND_TIMEOUT_MS: '60000', VERIFY_BATCH_DEADLINE_MS: '60000' }, {});
    const deadlineAt = Date.now() + 60_000;
    const asked = server.rcptReceived;
    const controller = new AbortController();
    const pending = verify.verify(['t@tarpit.test'], { deadlineAt, signal: controller.signal });
    await expect.poll(() => server.rcptReceived).toBeGreaterThan(asked); // the tarpit holds the RCPT
    controller.abort(new Error('job cancelled'));
    expect(await pending).toMatchObject([{ verdict: 'risky', reason: 'timeout' }]);
    await expect.poll(() => server.open).toBe(0);
    // A signal aborted before the call: nothing is probed at all.
    const connections = server.connections;
    const [early] = await verify.verify(['t@tarpit.test'], { deadlineAt, signal: AbortSignal.abort() });
    expect(early).toMatchObject({ verdict: 'risky', reason: 'timeout' });
    expect(server.connections).toBe(connections);
  });

  it('the private-address guard refuses loopback mail servers unless allowed', async () => {
    const server = smtp.get('127.0.0.4')!;
    const before = server.connections;
    const [result] = await run(['carol@implicit.test'], { VERIFY_ALLOW_PRIVATE_MX: 'false' });
    expect(result).toMatchObject({ verdict: 'risky', reason: 'no_connect' });
    expect(server.connections).toBe(before);
  });
});
