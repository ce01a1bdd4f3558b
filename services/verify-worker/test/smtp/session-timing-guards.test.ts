/**
 * The session against servers that use time and refusals on purpose: a greeting pause,
 * multi-line replies, and the guards against address harvesting.
 */
import { describe, expect, it } from 'vitest';
import { runSmtpSession } from '../../src/smtp/session.ts';
import { probe, unanswered, useRawServers, useRig, verbs } from './helpers.ts';

const rig = useRig();
const rawServer = useRawServers();
const addresses = (...locals: string[]) => locals.map((local) => `${local}@rig.test`);

describe('SMTP session: RFC 5321 timing', () => {
  it('waits through a greeting pause longer than the connect timeout, and says nothing before the final 220 line', async () => {
    const server = await rig({ greetingPauseMs: 400, users: ['a@rig.test'] });
    const result = await runSmtpSession(probe(server, addresses('a', 'b'), { connectTimeoutMs: 100, commandTimeoutMs: 1000 }));
    expect(result.failure).toBeUndefined();
    expect(result.rcpt.map((r) => r.reply.code)).toEqual([250, 550]);
    expect(server.earlyTalkers).toBe(0);
    const log = server.transcripts[0] ?? [];
    const finalGreeting = log.findIndex((e) => e.dir === 'out' && e.line.startsWith('220 '));
    const firstCommand = log.findIndex((e) => e.dir === 'in');
    expect(log[0]?.line).toMatch(/^220-/);
    expect(finalGreeting).toBeGreaterThan(0);
    expect(firstCommand).toBeGreaterThan(finalGreeting);
    expect((log[finalGreeting]?.at ?? 0) - (log[0]?.at ?? 0)).toBeGreaterThanOrEqual(380);
  });

  it('bounds the greeting by the command timeout', async () => {
    const server = await rig({ greetingPauseMs: 2_000 });
    const result = await runSmtpSession(probe(server, addresses('a'), { connectTimeoutMs: 1000, commandTimeoutMs: 200 }));
    expect(result.failure).toMatchObject({ stage: 'banner', kind: 'timeout' });
    expect(server.earlyTalkers).toBe(0);
  });

  it('reads multi-line replies of any number of lines, at the greeting, EHLO and RCPT', async () => {
    const long = Array.from({ length: 300 }, (_, i) => `5.1.1 line ${i} of a very long explanation`).join('\n');
    const server = await rig({
      banner: { code: 220, text: ['mx.rig.test ESMTP', ...Array.from({ length: 50 }, (_, i) => `notice ${i}`)].join('\n') },
      mailboxes: { 'long@rig.test': { code: 550, text: long } },
    });
    const replies: number[] = [];
    const result = await runSmtpSession(probe(server, addresses('long'), { onReply: (code) => replies.push(code) }));
    expect(result.failure).toBeUndefined();
    expect(replies).toEqual([220, 250, 250, 550]); // one greeting of 51 lines, one EHLO reply, MAIL, RCPT
    expect(result.rcpt[0]?.reply).toMatchObject({ code: 550, enhanced: '5.1.1' });
    expect(result.rcpt[0]?.reply.text).toContain('line 299 of');
  });
});

describe('SMTP session: guards against address harvesting', () => {
  it('a 421 and hang-up after N refusals: keeps the answers, reports the cut and the refusals before it', async () => {
    const server = await rig({ users: addresses('k1', 'k2', 'k3'), harvestGuard: { afterRejections: 2 } });
    const request = probe(server, addresses('x1', 'k1', 'x2', 'k2', 'x3', 'k3'));
    const result = await runSmtpSession(request);
    expect(result.rcpt.map((r) => [r.address, r.reply.code])).toEqual([
      ['x1@rig.test', 550],
      ['k1@rig.test', 250],
      ['x2@rig.test', 550],
    ]);
    expect(result.failure).toMatchObject({ stage: 'rcpt', kind: 'reply', reply: { code: 421 } });
    expect(result.cutAfterRefusals).toBe(2);
    expect(result.rcptReplies).toBe(4); // three answers and the 421
    expect(unanswered(request, result)).toEqual(addresses('k2', 'x3', 'k3'));
  });

  it('a refusal followed at once by a hang-up speaks of the session: that recipient is asked again', async () => {
    const tooMany = { code: 550, text: '5.7.1 Too many unknown recipients' };
    const server = await rig({ users: addresses('k1', 'k2'), harvestGuard: { afterRejections: 1, reply: tooMany } });
    const request = probe(server, addresses('x1', 'k1', 'k2'));
    const result = await runSmtpSession(request);
    expect(result.rcpt.map((r) => [r.address, r.reply.code])).toEqual([['x1@rig.test', 550]]);
    expect(result.failure).toMatchObject({ stage: 'rcpt', kind: 'closed' });
    expect(result.cutAfterRefusals).toBe(1);
    expect(unanswered(request, result)).toEqual(addresses('k1', 'k2'));
  });

  it('with a rejection cap: one RCPT at a time even under PIPELINING, and QUIT before the guard would cut', async () => {
    const server = await rig({ users: addresses('k1', 'k2'), harvestGuard: { afterRejections: 2 } });
    const request = probe(server, addresses('x1', 'k1', 'x2', 'k2'), { rejectionCap: 2 });
    const result = await runSmtpSession(request);
    expect(result.failure).toBeUndefined();
    expect(result.rcptStop).toBe('rejection_cap');
    expect(result.rcpt.map((r) => r.reply.code)).toEqual([550, 250, 550]);
    expect(unanswered(request, result)).toEqual(addresses('k2'));
    await expect.poll(() => verbs(server.commands[0])).toEqual(['EHLO', 'MAIL', 'RCPT', 'RCPT', 'RCPT', 'QUIT']);
    // MAIL and the first RCPT share a flight (PIPELINING); every later RCPT waits for the reply before it.
    const log = server.transcripts[0] ?? [];
    const rcpts = [...log.entries()].filter(([, entry]) => entry.dir === 'in' && entry.line.startsWith('RCPT'));
    expect(log[(rcpts[0]?.[0] ?? 0) - 1]?.line).toMatch(/^MAIL FROM/);
    for (const [i] of rcpts.slice(1)) expect(log[i - 1]?.dir).toBe('out');
    expect(log.some((entry) => entry.line.startsWith('421'))).toBe(false);
    // The cap reached on the last recipient stops nothing.
    const last = await runSmtpSession(probe(server, addresses('k2', 'x1', 'x2'), { rejectionCap: 2 }));
    expect(last.rcptStop).toBeUndefined();
    expect(last.rcpt.map((r) => r.reply.code)).toEqual([250, 550, 550]);
  });

  it('replies slowed after each refusal: ends the session at the first slowed reply, keeping it', async () => {
    const server = await rig({ users: addresses('k1', 'k2', 'k3'), slowdown: { perRejectionMs: 400 } });
    const request = probe(server, addresses('x1', 'k1', 'x2', 'k2', 'k3'), { slowReplyMs: 150, commandTimeoutMs: 3000 });
    const result = await runSmtpSession(request);
    expect(result.rcptStop).toBe('slowed');
    expect(result.slowedAfterRefusals).toBe(1);
    expect(result.rcpt.map((r) => [r.address, r.reply.code])).toEqual([
      ['x1@rig.test', 550],
      ['k1@rig.test', 250],
    ]);
    expect(unanswered(request, result)).toEqual(addresses('x2', 'k2', 'k3'));
    await expect.poll(() => server.open).toBe(0);
  });

  it('a server that is slow at everything is not taken for one that slows down on purpose', async () => {
    const server = await rig({ users: addresses('k1'), replyDelayMs: 200 });
    const result = await runSmtpSession(probe(server, addresses('x1', 'k1', 'x2'), { slowReplyMs: 150 }));
    expect(result.rcptStop).toBeUndefined();
    expect(result.rcpt).toHaveLength(3);
    const serial = await rig({ users: addresses('k1'), replyDelayMs: 200, pipelining: false });
    const lockstep = await runSmtpSession(probe(serial, addresses('x1', 'k1', 'x2'), { slowReplyMs: 150 }));
    expect(lockstep.rcptStop).toBeUndefined();
    expect(lockstep.rcpt).toHaveLength(3);
    // A tarpit on every RCPT alike, the replies 300 ms apart: the first refusal's own reply was as slow.
    const tarpit = await rig({ users: addresses('k1', 'k2'), tarpit: { at: 'rcpt', delayMs: 300, serial: true } });
    const patient = await runSmtpSession(probe(tarpit, addresses('x1', 'k1', 'x2', 'k2'), { slowReplyMs: 150, commandTimeoutMs: 2000 }));
    expect(patient.rcptStop).toBeUndefined();
    expect(patient.rcpt.map((r) => r.reply.code)).toEqual([550, 250, 550, 250]);
    const log = tarpit.transcripts[0] ?? [];
    const replies = log.filter((entry) => entry.dir === 'out' && /^(250|550) /.test(entry.line) && !entry.line.includes('2.1.0'));
    expect((replies.at(-1)?.at ?? 0) - (replies[0]?.at ?? 0)).toBeGreaterThanOrEqual(850); // they did come one by one
  });

  it('sends no more RCPTs than allowed, and says so', async () => {
    const server = await rig({ catchAll: true });
    const request = probe(server, addresses('a', 'b', 'c', 'd'), { maxRecipients: 2 });
    const result = await runSmtpSession(request);
    expect(result.rcpt.map((r) => r.address)).toEqual(addresses('a', 'b'));
    expect(result.rcptStop).toBe('max_recipients');
    expect(unanswered(request, result)).toEqual(addresses('c', 'd'));
    expect(server.rcptReceived).toBe(2);
  });

  it('a 421 at the greeting is reported without a word sent', async () => {
    const server = await rig({ greetingTempfail: { connections: 1 } });
    const first = await runSmtpSession(probe(server, addresses('a')));
    expect(first.failure).toMatchObject({ stage: 'banner', kind: 'reply', reply: { code: 421, enhanced: '4.7.0' } });
    expect(first.failure?.reply?.text).toMatch(/try again later/);
    const second = await runSmtpSession(probe(server, addresses('a')));
    expect(second.failure).toBeUndefined();
    expect(verbs(server.commands[0]).filter((verb) => verb !== 'QUIT')).toEqual([]);
  });

  it('the rig refuses a client that talks before the final greeting line (what the session never does)', async () => {
    const server = await rig({ greetingPauseMs: 300 });
    const { createConnection } = await import('node:net');
    const socket = createConnection({ host: server.host, port: server.port });
    const received: string[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk.toString()));
    await new Promise((resolve) => socket.once('data', resolve));
    socket.write('EHLO early.talker\r\n');
    await new Promise((resolve) => socket.once('close', resolve));
    expect(received.join('')).toMatch(/^220-.*\r\n521 5\.5\.1 /s);
    expect(server.earlyTalkers).toBe(1);
  });

  it('a server that answers before reading is refused as garbage, not taken for a reply', async () => {
    const server = await rawServer((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    const result = await runSmtpSession(probe(server, addresses('a')));
    expect(result.failure).toMatchObject({ stage: 'banner', kind: 'error' });
  });
});
