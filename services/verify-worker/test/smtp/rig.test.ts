import { describe, expect, it } from 'vitest';
import { runSmtpSession } from '../../src/smtp/session.ts';
import { findFreePort } from '@svc/testkit';
import { probe, useRig } from './helpers.ts';

const rig = useRig();

describe('SMTP test rig', () => {
  it('runs several scripted servers on one port across 127.0.0.x', async () => {
    const port = await findFreePort(['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    const servers = await Promise.all([
      rig({ host: '127.0.0.2', port, users: ['x@a.test'] }),
      rig({ host: '127.0.0.3', port, catchAll: true }),
      rig({ host: '127.0.0.4', port, rcptReply: { code: 550, text: '5.7.1 blocked' } }),
    ]);
    const results = await Promise.all(servers.map((s) => runSmtpSession(probe(s, ['x@a.test', 'y@a.test']))));
    expect(results.map((r) => r.rcpt.map((x) => x.reply.code))).toEqual([
      [250, 550],
      [250, 250],
      [550, 550],
    ]);
    expect(servers.map((s) => [s.port, s.connections, s.sessions, s.transactions])).toEqual(servers.map(() => [port, 1, 1, 1]));
  });

  it('greylists the first attempt of a sender/recipient pair, then lets it through', async () => {
    const server = await rig({ greylist: true, users: ['a@rig.test'] });
    const first = await runSmtpSession(probe(server, ['a@rig.test', 'b@rig.test']));
    expect(first.rcpt.map((r) => [r.reply.code, r.reply.enhanced])).toEqual([
      [451, '4.7.1'],
      [451, '4.7.1'],
    ]);
    const second = await runSmtpSession(probe(server, ['a@rig.test', 'b@rig.test']));
    expect(second.rcpt.map((r) => r.reply.code)).toEqual([250, 550]);
  });

  it('schedules each pipelined reply after its own command, in order', async () => {
    const delayMs = 300;
    const server = await rig({ catchAll: true, replyDelayMs: delayMs, bannerDelayMs: 0 });
    const recipients = Array.from({ length: 8 }, (_, i) => `r${i}@rig.test`);
    await runSmtpSession(probe(server, recipients));
    const log = server.transcripts[0] ?? [];
    const mail = log.findIndex((e) => e.line.startsWith('MAIL'));
    const mailAt = log[mail]?.at ?? 0;
    const outs = log.filter((e, i) => e.dir === 'out' && i > mail);
    expect(outs.map((e) => e.line.slice(0, 3))).toEqual(Array<string>(9).fill('250'));
    // Each reply waits its delay from its own command's arrival (the one flight)...
    expect((outs[0]?.at ?? 0) - mailAt).toBeGreaterThanOrEqual(delayMs - 5);
    // ...so the nine go out together, where replies delayed one after the other would span eight delays.
    expect((outs.at(-1)?.at ?? 0) - (outs[0]?.at ?? 0)).toBeLessThan(delayMs);
  });

  it('counts concurrent connections', async () => {
    const server = await rig({ catchAll: true, replyDelayMs: 30 });
    await Promise.all([1, 2, 3].map(() => runSmtpSession(probe(server, ['a@rig.test']))));
    expect(server.connections).toBe(3);
    expect(server.maxOpen).toBe(3);
  });
});
