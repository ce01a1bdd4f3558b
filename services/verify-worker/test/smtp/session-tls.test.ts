import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runSmtpSession } from '../../src/smtp/session.ts';
import { rigCertificate } from '@svc/testkit';
import { probe, unanswered, useRawServers, useRig, verbs } from './helpers.ts';

const rig = useRig();
const rawServer = useRawServers();

describe('SMTP session: STARTTLS and greeting', () => {
  it('the rig certificate is a valid self-signed X.509 certificate', () => {
    const cert = new X509Certificate(rigCertificate().cert);
    expect(cert.subject).toBe('CN=mx.rig.test');
    expect(cert.checkIssued(cert)).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
  });

  it('upgrades to TLS when offered despite a self-signed certificate, then says EHLO again', async () => {
    const server = await rig({ starttls: 'offered', users: ['a@rig.test'] });
    const result = await runSmtpSession(probe(server, ['a@rig.test', 'b@rig.test']));
    expect(result.failure).toBeUndefined();
    expect(result.rcpt.map((r) => r.reply.code)).toEqual([250, 550]);
    await expect.poll(() => verbs(server.commands[0])).toEqual(['EHLO', 'STARTTLS', 'EHLO', 'MAIL', 'RCPT', 'RCPT', 'QUIT']);
    // The transaction ran inside TLS: every MAIL and RCPT came over the upgraded connection.
    const log = server.transcripts[0] ?? [];
    expect(log.filter((e) => e.dir === 'in' && /^(MAIL|RCPT)/.test(e.line)).every((e) => e.tls)).toBe(true);
    expect([server.connections, server.sessions, server.transactions]).toEqual([1, 1, 1]);
  });

  it('passes a server that requires STARTTLS before MAIL', async () => {
    const server = await rig({ starttls: 'required', catchAll: true });
    const result = await runSmtpSession(probe(server, ['a@rig.test']));
    expect(result.failure).toBeUndefined();
    expect(result.rcpt.map((r) => r.reply.code)).toEqual([250]);
  });

  it('redoes the session in plaintext on a new connection when the TLS handshake fails', async () => {
    const server = await rig({ starttls: 'broken', users: ['a@rig.test'] });
    const result = await runSmtpSession(probe(server, ['a@rig.test', 'b@rig.test']));
    expect(result.failure).toBeUndefined();
    expect(result.rcpt.map((r) => r.reply.code)).toEqual([250, 550]);
    // The first connection asked for STARTTLS; the second, in plaintext throughout, did the transaction.
    expect(server.connections).toBe(2);
    expect(verbs(server.commands[0])).toEqual(['EHLO', 'STARTTLS']);
    expect(verbs(server.commands[1]).slice(0, 2)).toEqual(['EHLO', 'MAIL']);
    expect(server.transcripts[1]?.some((e) => e.tls)).toBe(false);
  });

  it('refuses to go on when the server sends more after its 220 to STARTTLS (response injection)', async () => {
    let connections = 0;
    const server = await rawServer((s) => {
      connections++;
      s.write('220 evil ESMTP\r\n');
      s.on('data', (d: Buffer) => {
        const line = d.toString();
        if (line.startsWith('EHLO')) s.write('250-evil\r\n250 STARTTLS\r\n');
        if (line.startsWith('STARTTLS')) s.write('220 go ahead\r\n250 2.1.5 injected\r\n');
      });
    });
    const request = probe(server, ['a@rig.test']);
    const result = await runSmtpSession(request);
    expect(result.failure).toMatchObject({ stage: 'starttls', kind: 'error' });
    expect(result.failure?.detail).toMatch(/after the STARTTLS reply/);
    expect(result.rcpt).toEqual([]);
    expect(unanswered(request, result)).toEqual(['a@rig.test']);
    expect(connections).toBe(1); // no plaintext retry: the TLS handshake never started
  });

  it('continues in plaintext on the same connection when STARTTLS is refused', async () => {
    const server = await rig({
      starttls: 'offered',
      starttlsReply: { code: 454, text: '4.7.0 TLS not available due to local problem' },
      catchAll: true,
    });
    const result = await runSmtpSession(probe(server, ['a@rig.test']));
    expect(result.failure).toBeUndefined();
    expect(result.rcpt).toHaveLength(1);
    expect(server.connections).toBe(1);
    expect(server.transcripts[0]?.some((e) => e.tls)).toBe(false);
    expect(verbs(server.commands[0]).slice(0, 3)).toEqual(['EHLO', 'STARTTLS', 'MAIL']);
  });

  it('falls back to HELO when EHLO is rejected, then sends one RCPT at a time', async () => {
    const server = await rig({ ehlo: 'reject', users: ['a@rig.test'] });
    const result = await runSmtpSession(probe(server, ['a@rig.test', 'b@rig.test']));
    expect(result.failure).toBeUndefined();
    expect(result.rcpt.map((r) => r.reply.code)).toEqual([250, 550]);
    // No extension after HELO: no STARTTLS, no PIPELINING (each RCPT waits for the reply before it).
    const log = server.transcripts[0] ?? [];
    expect(log.some((e) => e.tls)).toBe(false);
    for (const [i, entry] of log.entries()) if (entry.dir === 'in' && entry.line.startsWith('RCPT')) expect(log[i - 1]?.dir).toBe('out');
    expect(verbs(server.commands[0]).slice(0, 3)).toEqual(['EHLO', 'HELO', 'MAIL']);
  });

  it('reports a 421 banner without saying EHLO', async () => {
    const server = await rig({ banner: { code: 421, text: '4.7.0 mx.rig.test Too many connections, try again later' } });
    const request = probe(server, ['a@rig.test']);
    const result = await runSmtpSession(request);
    expect(result.failure).toMatchObject({ stage: 'banner', kind: 'reply', reply: { code: 421, enhanced: '4.7.0' } });
    expect(unanswered(request, result)).toEqual(['a@rig.test']);
    expect(verbs(server.commands[0]).filter((v) => v !== 'QUIT')).toEqual([]);
  });
});
