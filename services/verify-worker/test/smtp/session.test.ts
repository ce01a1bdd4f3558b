import { describe, expect, it } from 'vitest';
import { runSmtpSession } from '../../src/smtp/session.ts';
import { probe, unanswered, useRig, verbs } from './helpers.ts';

const rig = useRig();
const codes = (r: { rcpt: Array<{ address: string; reply: { code: number; enhanced?: string } }> }) =>
  r.rcpt.map((x) => [x.address, x.reply.code, x.reply.enhanced]);

describe('SMTP session: the transaction', () => {
  it('accepts a known user and rejects an unknown one, MAIL FROM sent once, QUIT at the end', async () => {
    const server = await rig({ users: ['alice@rig.test'] });
    const replies: number[] = [];
    const request = probe(server, ['alice@rig.test', 'nobody@rig.test'], { onReply: (c) => replies.push(c) });
    const result = await runSmtpSession(request);
    expect(result.failure).toBeUndefined();
    expect(codes(result)).toEqual([
      ['alice@rig.test', 250, '2.1.5'],
      ['nobody@rig.test', 550, '5.1.1'],
    ]);
    expect(unanswered(request, result)).toEqual([]);
    // The greeting, EHLO, MAIL FROM (the server opened one transaction), then the two RCPTs.
    expect(replies).toEqual([220, 250, 250, 250, 550]);
    expect(server.transactions).toBe(1);
    await expect.poll(() => verbs(server.commands[0])).toEqual(['EHLO', 'MAIL', 'RCPT', 'RCPT', 'QUIT']);
    expect(server.commands[0]?.[1]).toBe('MAIL FROM:<verify@probe.verify.test>');
  });

  it('carries many recipients in one session and one transaction', async () => {
    const server = await rig({
      catchAll: true,
      mailboxes: { 'full@rig.test': 'full', 'off@rig.test': 'disabled', 'grey@rig.test': 'greylist' },
    });
    const many = Array.from({ length: 40 }, (_, i) => `user${i}@rig.test`);
    const result = await runSmtpSession(probe(server, [...many, 'full@rig.test', 'off@rig.test', 'grey@rig.test']));
    expect(result.rcpt).toHaveLength(43);
    expect(result.rcpt.slice(0, 40).every((r) => r.reply.code === 250)).toBe(true);
    expect(codes(result).slice(40)).toEqual([
      ['full@rig.test', 552, '5.2.2'],
      ['off@rig.test', 550, '5.2.1'],
      ['grey@rig.test', 451, '4.7.1'],
    ]);
    expect(server.connections).toBe(1);
    expect(server.transactions).toBe(1);
  });

  it('pipelines MAIL FROM and every RCPT in one flight when PIPELINING is offered', async () => {
    // Each reply comes 100 ms late: a client that waited for each reply would show it in the transcript.
    const server = await rig({ users: ['a@rig.test', 'b@rig.test', 'c@rig.test'], replyDelayMs: 100 });
    const result = await runSmtpSession(probe(server, ['a@rig.test', 'b@rig.test', 'c@rig.test', 'd@rig.test']));
    expect(codes(result).map((c) => c[1])).toEqual([250, 250, 250, 550]);
    // The server read MAIL FROM and all four RCPTs before it sent its first reply after them.
    const log = server.transcripts[0] ?? [];
    const mailIn = log.findIndex((e) => e.dir === 'in' && e.line.startsWith('MAIL'));
    const firstReplyAfterMail = log.findIndex((e, i) => i > mailIn && e.dir === 'out');
    expect(verbs(log.slice(mailIn, firstReplyAfterMail).map((e) => e.line))).toEqual(['MAIL', 'RCPT', 'RCPT', 'RCPT', 'RCPT']);
  });

  it('sends one RCPT at a time when PIPELINING is not offered', async () => {
    const server = await rig({ users: ['a@rig.test'], pipelining: false });
    const result = await runSmtpSession(probe(server, ['a@rig.test', 'b@rig.test', 'c@rig.test']));
    expect(codes(result).map((c) => c[1])).toEqual([250, 550, 550]);
    expect(verbs(server.commands[0]).slice(0, 2)).toEqual(['EHLO', 'MAIL']); // ESMTP: no HELO needed
    const log = server.transcripts[0] ?? [];
    // Every command after EHLO arrives only once the reply to the one before it went out.
    for (const [i, entry] of log.entries()) {
      if (entry.dir === 'in' && /^(RCPT|MAIL)/.test(entry.line)) expect(log[i - 1]?.dir).toBe('out');
    }
  });

  it('stops at 452 4.5.3 and hands the rest back as unanswered', async () => {
    const server = await rig({ catchAll: true, maxRecipients: 2 });
    const request = probe(server, ['a@rig.test', 'b@rig.test', 'c@rig.test', 'd@rig.test']);
    const result = await runSmtpSession(request);
    expect(result.rcptStop).toBe('too_many_recipients');
    expect(result.failure).toBeUndefined();
    expect(result.rcpt.map((r) => r.address)).toEqual(['a@rig.test', 'b@rig.test']);
    expect(unanswered(request, result)).toEqual(['c@rig.test', 'd@rig.test']);
  });

  it('keeps the answers when the server drops the connection mid-session', async () => {
    const server = await rig({ catchAll: true, dropAfterRcpts: 2 });
    const request = probe(server, ['a@rig.test', 'b@rig.test', 'c@rig.test', 'd@rig.test']);
    const result = await runSmtpSession(request);
    expect(result.failure).toMatchObject({ stage: 'rcpt', kind: 'closed' });
    expect(result.rcpt.map((r) => r.address)).toEqual(['a@rig.test', 'b@rig.test']);
    expect(unanswered(request, result)).toEqual(['c@rig.test', 'd@rig.test']);
  });

  it('reports a policy block at MAIL FROM without sending the recipients as answered', async () => {
    const server = await rig({ mailFromReply: { code: 550, text: '5.7.1 Client host [127.0.0.1] blocked using zen.spamhaus.org' } });
    const request = probe(server, ['a@rig.test', 'b@rig.test']);
    const result = await runSmtpSession(request);
    expect(result.failure).toMatchObject({ stage: 'mail', kind: 'reply', reply: { code: 550, enhanced: '5.7.1' } });
    expect(result.failure?.reply?.text).toContain('spamhaus');
    expect(result.rcpt).toEqual([]);
    expect(unanswered(request, result)).toEqual(['a@rig.test', 'b@rig.test']);
  });

  it('passes a policy block at RCPT through as the reply', async () => {
    const server = await rig({ rcptReply: { code: 550, text: '5.7.1 Service unavailable; client host blocked' } });
    const result = await runSmtpSession(probe(server, ['a@rig.test']));
    expect(codes(result)).toEqual([['a@rig.test', 550, '5.7.1']]);
  });
});

describe('SMTP session: SMTPUTF8 and injection', () => {
  it('adds SMTPUTF8 to MAIL FROM when a recipient needs it and the server offers it', async () => {
    const server = await rig({ smtputf8: true, users: ['josé@rig.test'] });
    const result = await runSmtpSession(probe(server, ['josé@rig.test', 'ascii@rig.test']));
    expect(codes(result)).toEqual([
      ['josé@rig.test', 250, '2.1.5'],
      ['ascii@rig.test', 550, '5.1.1'],
    ]);
    expect(result.skippedNeedsSmtpUtf8).toEqual([]);
    expect(server.commands[0]).toContain('MAIL FROM:<verify@probe.verify.test> SMTPUTF8');
    expect(server.commands[0]).toContain('RCPT TO:<josé@rig.test>');
  });

  it('does not send a non-ASCII address to a server without SMTPUTF8', async () => {
    const server = await rig({ users: ['ascii@rig.test'] });
    const request = probe(server, ['josé@rig.test', 'ascii@rig.test', '用户@rig.test']);
    const result = await runSmtpSession(request);
    expect(result.skippedNeedsSmtpUtf8).toEqual(['josé@rig.test', '用户@rig.test']);
    expect(codes(result)).toEqual([['ascii@rig.test', 250, '2.1.5']]);
    expect(unanswered(request, result)).toEqual([]);
    expect(server.commands[0]?.some((l) => /[^\x20-\x7e]/.test(l))).toBe(false);
    expect(server.commands[0]).toContain('MAIL FROM:<verify@probe.verify.test>');
  });

  it('opens no transaction when every recipient was skipped', async () => {
    const server = await rig();
    const result = await runSmtpSession(probe(server, ['josé@rig.test']));
    expect(result.skippedNeedsSmtpUtf8).toEqual(['josé@rig.test']);
    await expect.poll(() => verbs(server.commands[0])).toEqual(['EHLO', 'QUIT']);
  });

  it.each([
    ['CRLF', 'a@rig.test\r\nRCPT TO:<victim@rig.test>'],
    ['bare LF', 'a@rig.test\nDATA'],
    ['NUL', 'a\u0000@rig.test'],
    ['angle bracket', 'a@rig.test>\r\nRSET'],
    ['space', 'a@rig.test> NOTIFY=NEVER'],
    ['tab', 'a\t@rig.test'],
    ['no domain', 'a@'],
  ])('refuses a recipient with %s before connecting', async (_name, bad) => {
    const server = await rig({ catchAll: true });
    await expect(runSmtpSession(probe(server, ['ok@rig.test', bad]))).rejects.toThrow(/unsafe recipient/);
    expect(server.connections).toBe(0);
  });

  it('refuses an unsafe sender or HELO name', async () => {
    const server = await rig({ catchAll: true });
    await expect(runSmtpSession(probe(server, ['a@rig.test'], { mailFrom: 'v@x.test>\r\nRCPT TO:<y@x.test' }))).rejects.toThrow(
      /unsafe sender/,
    );
    await expect(runSmtpSession(probe(server, ['a@rig.test'], { heloName: 'x\r\nMAIL FROM:<>' }))).rejects.toThrow(/unsafe HELO/);
    expect(server.connections).toBe(0);
  });

  it('refuses a host that is not an IP address (it would be resolved again, unvetted)', async () => {
    await expect(runSmtpSession(probe({ host: 'localhost', port: 25 }, ['a@rig.test']))).rejects.toThrow(/non-IP host/);
  });

  it('sends the null sender as MAIL FROM:<>', async () => {
    const server = await rig({ catchAll: true });
    const result = await runSmtpSession(probe(server, ['a@rig.test'], { mailFrom: '' }));
    expect(result.rcpt).toHaveLength(1);
    expect(server.commands[0]).toContain('MAIL FROM:<>');
  });
});
