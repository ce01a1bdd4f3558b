import net from 'node:net';
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { runSmtpSession } from '../../src/smtp/session.ts';
import { findFreePort } from '@svc/testkit';
import { probe, unanswered, useRawServers, useRig } from './helpers.ts';

const rig = useRig();
const rawServer = useRawServers();

/** A minimal SOCKS5 proxy (RFC 1928, no auth, CONNECT to IPv4) that records its targets. */
async function socks5Proxy(options: { silent?: boolean } = {}): Promise<{ url: string; targets: string[] }> {
  const targets: string[] = [];
  const sockets = new Set<net.Socket>();
  const { port } = await rawServer((client) => {
    sockets.add(client);
    if (options.silent) return void client.resume(); // reads, never answers
    client.once('data', () => {
      client.write(Buffer.from([5, 0]));
      client.once('data', (req) => {
        const host = [...req.subarray(4, 8)].join('.');
        const port = req.readUInt16BE(8);
        targets.push(`${host}:${port}`);
        const upstream = net.connect(port, host);
        const reply = (status: number) => Buffer.from([5, status, 0, 1, 0, 0, 0, 0, 0, 0]);
        upstream.once('connect', () => {
          client.write(reply(0));
          client.pipe(upstream).pipe(client);
        });
        upstream.on('error', () => client.end(reply(5)));
        client.on('close', () => upstream.destroy());
      });
    });
  });
  return { url: `socks5://127.0.0.1:${port}`, targets };
}

const fast = { connectTimeoutMs: 250, commandTimeoutMs: 250 };

describe('SMTP session: timeouts, refusals, abort', () => {
  it('bounds a tarpit at the banner by the command timeout', async () => {
    const server = await rig({ tarpit: { at: 'banner' } });
    const request = probe(server, ['a@rig.test'], { connectTimeoutMs: 5_000, commandTimeoutMs: 250 });
    const result = await runSmtpSession(request);
    // The greeting's own timer fired, not the connect timer nor a reply.
    expect(result.failure).toMatchObject({ stage: 'banner', kind: 'timeout', detail: 'no reply within 250 ms' });
    expect(unanswered(request, result)).toEqual(['a@rig.test']);
  });

  it('bounds a tarpit at RCPT by the command timeout and closes the connection', async () => {
    const server = await rig({ tarpit: { at: 'rcpt' }, catchAll: true });
    const request = probe(server, ['a@rig.test', 'b@rig.test'], fast);
    const result = await runSmtpSession(request);
    expect(result.failure).toMatchObject({ stage: 'rcpt', kind: 'timeout' });
    expect(server.transactions).toBe(1); // MAIL FROM was accepted: the RCPTs are what went unanswered
    expect(unanswered(request, result)).toEqual(['a@rig.test', 'b@rig.test']);
    await expect.poll(() => server.open).toBe(0);
  });

  it('waits out a slow server that stays within the command timeout', async () => {
    const server = await rig({ tarpit: { at: 'mail', delayMs: 150 }, catchAll: true });
    const result = await runSmtpSession(probe(server, ['a@rig.test'], { commandTimeoutMs: 400 }));
    expect(result.failure).toBeUndefined();
    expect(result.rcpt).toHaveLength(1);
  });

  it('ends at once when the signal aborts, socket destroyed', async () => {
    const server = await rig({ tarpit: { at: 'rcpt' }, catchAll: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const commandTimeoutMs = 10_000;
    const request = probe(server, ['a@rig.test'], { commandTimeoutMs, signal: controller.signal });
    const started = Date.now();
    const result = await runSmtpSession(request);
    // The abort ended the wait for the RCPT reply, long before the command timeout would have.
    expect(result.failure).toMatchObject({ stage: 'rcpt', kind: 'aborted' });
    expect(Date.now() - started).toBeLessThan(commandTimeoutMs / 2);
    expect(unanswered(request, result)).toEqual(['a@rig.test']);
    await expect.poll(() => server.open).toBe(0);
  });

  it('resolves without waiting for the reply to QUIT', async () => {
    // The server never answers QUIT: a session waiting for the 221 would wait out the command timeout.
    const server = await rig({ tarpit: { at: 'quit' }, catchAll: true });
    const commandTimeoutMs = 10_000;
    const started = Date.now();
    const result = await runSmtpSession(probe(server, ['a@rig.test'], { commandTimeoutMs }));
    expect(Date.now() - started).toBeLessThan(commandTimeoutMs / 2);
    expect(result.failure).toBeUndefined();
    expect(result.rcpt).toHaveLength(1);
    await expect.poll(() => server.commands[0]).toContain('QUIT');
    expect(server.transcripts[0]?.some((e) => e.dir === 'out' && e.line.startsWith('221'))).toBe(false);
  });

  it('leaves no listener on the batch signal, whatever the outcome', async () => {
    const signal = new AbortController().signal;
    for (const script of [
      { catchAll: true },
      { starttls: 'offered' as const, catchAll: true },
      { tarpit: { at: 'rcpt' as const } },
      { starttls: 'broken' as const },
    ]) {
      const server = await rig(script);
      await runSmtpSession(probe(server, ['a@rig.test'], { ...fast, signal }));
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    }
  });

  it('does not connect when the signal is already aborted', async () => {
    const server = await rig();
    const result = await runSmtpSession(probe(server, ['a@rig.test'], { signal: AbortSignal.abort() }));
    expect(result.failure).toMatchObject({ stage: 'connect', kind: 'aborted' });
    expect(server.connections).toBe(0);
  });

  it('reports a refused connection (nothing listening)', async () => {
    const port = await findFreePort(['127.0.0.1']);
    const replies: number[] = [];
    const result = await runSmtpSession(probe({ host: '127.0.0.1', port }, ['a@rig.test'], { ...fast, onReply: (c) => replies.push(c) }));
    expect(result.failure).toMatchObject({ stage: 'connect', kind: 'refused' });
    expect(replies).toEqual([]); // no connection, so not even a greeting
  });

  it('reports a server that accepts then closes the connection', async () => {
    const server = await rig({ refuse: 'close' });
    const result = await runSmtpSession(probe(server, ['a@rig.test'], fast));
    expect(result.failure).toMatchObject({ stage: 'banner', kind: 'closed' });
  });

  it('reports a server that resets the connection at once', async () => {
    const server = await rig({ refuse: 'reset' });
    const { failure } = await runSmtpSession(probe(server, ['a@rig.test'], fast));
    // The RST may beat the connect event: then it is a refusal, else a drop before the banner.
    expect(['connect refused', 'banner closed']).toContain(`${failure?.stage} ${failure?.kind}`);
  });

  it('caps the memory a hostile endless reply can take', async () => {
    const server = await rawServer((s) => {
      s.write('220 ');
      const chunk = Buffer.alloc(32 * 1024, 'x');
      const pump = (): void => void (s.writable && s.write(chunk, pump));
      pump();
    });
    const result = await runSmtpSession(probe(server, ['a@rig.test'], fast));
    expect(result.failure).toMatchObject({ stage: 'banner', kind: 'error' });
    expect(result.failure?.detail).toMatch(/longer than 65536/);
  });
});

describe('SMTP session: SOCKS5 egress', () => {
  it('speaks SMTP through a SOCKS5 proxy', async () => {
    const server = await rig({ users: ['a@rig.test'] });
    const proxy = await socks5Proxy();
    const result = await runSmtpSession(probe(server, ['a@rig.test', 'b@rig.test'], { socksProxy: proxy.url }));
    expect(result.failure).toBeUndefined();
    expect(result.rcpt.map((r) => r.reply.code)).toEqual([250, 550]);
    expect(proxy.targets).toEqual([`127.0.0.1:${server.port}`]);
  });

  it('reports a target the proxy could not reach as refused', async () => {
    const proxy = await socks5Proxy();
    const port = await findFreePort(['127.0.0.1']);
    const result = await runSmtpSession(probe({ host: '127.0.0.1', port }, ['a@rig.test'], { ...fast, socksProxy: proxy.url }));
    expect(result.failure).toMatchObject({ stage: 'connect', kind: 'refused' });
  });

  it('bounds a silent proxy by the connect timeout', async () => {
    const proxy = await socks5Proxy({ silent: true });
    const result = await runSmtpSession(probe({ host: '127.0.0.1', port: 25 }, ['a@rig.test'], { ...fast, socksProxy: proxy.url }));
    // Our own timer fired: the SOCKS library's, a second later, would have reported an error.
    expect(result.failure).toMatchObject({ stage: 'connect', kind: 'timeout' });
    expect(result.failure?.detail).toMatch(/^socks proxy: no connection within \d+ ms$/);
  });
});
