/**
 * One delivery attempt against real servers on loopback: what is sent, what the SSRF guard
 * refuses before anything is sent, that the connection goes to the address that was checked
 * (a name only the rig's DNS knows, over TLS verified against that name), and the bounds: no
 * redirect followed, a deadline, a bounded read of the answer.
 *
 * fixtures/tls holds a throwaway test CA (its private key was discarded after signing) and a
 * certificate for hooks.example.test valid until 2126, with its key: for these tests only.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type RigDnsServer } from '@svc/testkit';
import { deliver, resolveWithSystem, type DeliveryRequest, type ResolveHost } from '@svc/webhooks';
import { resolverFor, startReceiver, type Receiver } from './support/receiver.ts';

const tlsFile = (name: string) => readFileSync(new URL(`./fixtures/tls/${name}`, import.meta.url), 'utf8');
const request = (url: string): DeliveryRequest => ({
  url,
  body: '{"id":"lst_1","event":"list.completed"}',
  headers: { 'x-event-id': 'evt_1' },
});

let dns: RigDnsServer;
let resolveHost: ResolveHost;
const receivers: Receiver[] = [];
const receiver = async (...args: Parameters<typeof startReceiver>) => {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
};

beforeAll(async () => {
  dns = await startDnsServer({
    'hooks.example.test': { A: ['127.0.0.1'] },
    'other.example.test': { A: ['127.0.0.1'] },
    'mixed.example.test': { A: ['10.0.0.1', '127.0.0.1'], AAAA: ['::1', 'fd00::1'] },
    'metadata.example.test': { A: ['169.254.169.254'] },
  });
  resolveHost = resolverFor(dns);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await dns.close();
});

describe('deliver: what is sent', () => {
  it('POSTs the exact body with its headers to the path and query of the URL', async () => {
    const target = await receiver(() => ({ status: 204 }));
    const outcome = await deliver(request(`${target.origin}/hooks/lists?token=abc`), { allowPrivate: true });
    expect(outcome).toEqual({ kind: 'delivered', status: 204 });
    expect(target.requests).toHaveLength(1);
    const [received] = target.requests;
    expect(received).toMatchObject({ method: 'POST', url: '/hooks/lists?token=abc', body: '{"id":"lst_1","event":"list.completed"}' });
    expect(received!.headers).toMatchObject({
      'content-type': 'application/json',
      'content-length': '39',
      'x-event-id': 'evt_1',
      'user-agent': expect.stringContaining('email-qr-service'),
    });
  });

  it('any non-2xx is a failed attempt with its status', async () => {
    const target = await receiver(() => ({ status: 503, body: 'busy' }));
    expect(await deliver(request(target.origin), { allowPrivate: true })).toEqual({ kind: 'failed', reason: 'HTTP 503', status: 503 });
  });
});

describe('deliver: the SSRF guard (private callbacks not allowed)', () => {
  it('refuses http:// and loopback literals without connecting', async () => {
    const target = await receiver(() => ({ status: 200 }));
    expect(await deliver(request(target.origin), { allowPrivate: false })).toEqual({
      kind: 'refused',
      reason: 'callbackUrl must use https://.',
    });
    const https = `https://127.0.0.1:${target.port}/`;
    expect((await deliver(request(https), { allowPrivate: false })).kind).toBe('refused');
    expect((await deliver(request(`https://[::ffff:127.0.0.1]:${target.port}/`), { allowPrivate: false })).kind).toBe('refused');
    expect(target.requests).toHaveLength(0);
  });

  it('refuses a public-looking name that resolves to 127.0.0.1, after resolving it once', async () => {
    const target = await receiver(() => ({ status: 200 }), { tls: { key: tlsFile('hooks.key'), cert: tlsFile('hooks.crt') } });
    const asked = dns.queries.length;
    const outcome = await deliver(request(`https://hooks.example.test:${target.port}/cb`), {
      allowPrivate: false,
      resolveHost,
      ca: tlsFile('ca.crt'),
    });
    expect(outcome).toEqual({ kind: 'refused', reason: 'hooks.example.test resolves to no public address' });
    expect(dns.queries.slice(asked).map((query) => query.name)).toContain('hooks.example.test');
    expect(target.requests).toHaveLength(0);
    expect(target.closedConnections).toBe(0);
  });

  it('refuses names resolving only to private, unique-local or link-local (metadata) addresses', async () => {
    for (const host of ['mixed.example.test', 'metadata.example.test'])
      expect(await deliver(request(`https://${host}/cb`), { allowPrivate: false, resolveHost })).toEqual({
        kind: 'refused',
        reason: `${host} resolves to no public address`,
      });
  });
});

describe('deliver: the connection goes to the checked address', () => {
  let target: Receiver;
  beforeAll(async () => {
    target = await receiver(() => ({ status: 200 }), { tls: { key: tlsFile('hooks.key'), cert: tlsFile('hooks.crt') } });
  });

  it('reaches a name the system resolver does not know, over TLS verified against that name', async () => {
    // Only the rig's DNS knows this name: had the socket resolved it again, it would have failed.
    await expect(resolveWithSystem('hooks.example.test')).rejects.toThrow();
    const outcome = await deliver(request(`https://hooks.example.test:${target.port}/cb`), {
      allowPrivate: true,
      resolveHost,
      ca: tlsFile('ca.crt'),
    });
    expect(outcome).toEqual({ kind: 'delivered', status: 200 });
    expect(target.requests.at(-1)?.headers.host).toBe(`hooks.example.test:${target.port}`);
  });

  it('still refuses a certificate for another name, or from an unknown authority', async () => {
    const wrongName = await deliver(request(`https://other.example.test:${target.port}/cb`), {
      allowPrivate: true,
      resolveHost,
      ca: tlsFile('ca.crt'),
    });
    expect(wrongName).toEqual({ kind: 'failed', reason: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    const unknownCa = await deliver(request(`https://hooks.example.test:${target.port}/cb`), { allowPrivate: true, resolveHost });
    expect(unknownCa.kind).toBe('failed');
  });
});

describe('deliver: bounds', () => {
  it('does not follow a redirect', async () => {
    const elsewhere = await receiver(() => ({ status: 200 }));
    const target = await receiver(() => ({ status: 307, headers: { location: `${elsewhere.origin}/cb` } }));
    expect(await deliver(request(target.origin), { allowPrivate: true })).toEqual({ kind: 'failed', reason: 'HTTP 307', status: 307 });
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('gives up on a receiver that does not answer within the deadline, and closes the connection', async () => {
    const target = await receiver(() => 'hang');
    expect(await deliver(request(target.origin), { allowPrivate: true, timeoutMs: 300 })).toEqual({
      kind: 'failed',
      reason: 'no answer within 300 ms',
    });
    await expect.poll(() => target.closedConnections).toBe(1);
  });

  it('reads a bounded part of an endless answer: the status decides', async () => {
    const target = await receiver(() => 'endless-200');
    expect(await deliver(request(target.origin), { allowPrivate: true, maxResponseBytes: 64 * 1024 })).toEqual({
      kind: 'delivered',
      status: 200,
    });
    await expect.poll(() => target.closedConnections).toBe(1);
  });

  it('reports refused connections, unknown names and cancellation as failed attempts', async () => {
    const gone = await startReceiver(() => ({ status: 200 }));
    await gone.close();
    expect(await deliver(request(gone.origin), { allowPrivate: true })).toEqual({ kind: 'failed', reason: 'ECONNREFUSED' });
    expect(await deliver(request('https://nowhere.example.test/cb'), { allowPrivate: true, resolveHost })).toEqual({
      kind: 'failed',
      reason: 'cannot resolve nowhere.example.test: ENOTFOUND',
    });
    const target = await receiver(() => 'hang');
    const controller = new AbortController();
    const pending = deliver(request(target.origin), { allowPrivate: true, signal: controller.signal });
    await expect.poll(() => target.requests.length).toBe(1);
    controller.abort();
    expect(await pending).toEqual({ kind: 'failed', reason: 'cancelled' });
  });
});
