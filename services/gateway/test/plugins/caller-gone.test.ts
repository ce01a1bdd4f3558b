/**
 * A caller that closes its connection before its answer: the request says so (`callerLeft`), the
 * signal read before it left aborts, the one read after it left is born aborted, and a request
 * whose caller stays never aborts its signal. The signal is made on first read only
 * (plugins/observability.ts), so every case reads it at a different moment. Real sockets on a
 * loopback port: `inject` has no connection to close.
 */
import { createAccessLog, createGatewayMetrics, createRegistry } from '@svc/telemetry';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { once } from 'node:events';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryMeter, billingPeriod } from '@svc/metering';
import { generateApiKey } from '../../src/auth/api-keys.ts';
import authPlugin from '../../src/plugins/auth.ts';
import meteringPlugin from '../../src/plugins/metering.ts';
import observabilityPlugin from '../../src/plugins/observability.ts';
import { MemoryKeyStore } from '../../src/stores/key-store.ts';

const seen: Array<{ readBefore: boolean | undefined; left: boolean; readAfter: boolean }> = [];
const app = Fastify();
const metrics = createGatewayMetrics(createRegistry());
await app.register(observabilityPlugin, {
  metrics,
  accessLog: createAccessLog('warn', 'test', new Writable({ write: (_chunk, _encoding, callback) => callback() })),
});
// Metering is what refuses to bill a caller who left: a job settled on the spot (QR in process)
// never reads the signal (libs/shared/jobs/src/in-process.ts).
const meter = new MemoryMeter();
const keys = new MemoryKeyStore();
const token = generateApiKey();
const key = await keys.create('test', token);
await app.register(authPlugin, { keys });
const allowances = { 'email-verify.batch': 1, 'email-verify.single': 1, 'qr.generate': 1, 'qr.wifi': 1, 'email-verify.list': 1 };
await app.register(meteringPlugin, { meter, freeAllowances: allowances, metrics, deadlines: { ...allowances }, meterTimeoutMs: 0 });
const charges: string[] = [];
/**
 * Waits until the caller has left (its response closed before it was written; this listener runs
 * after the plugin's, which marks the request), or 1 s for one who stays, reading the signal
 * first when `early`.
 */
async function watch(request: FastifyRequest, reply: FastifyReply, early: boolean): Promise<void> {
  const before = early ? request.callerGone : undefined;
  if (!request.callerLeft) await Promise.race([once(reply.raw, 'close'), sleep(1_000)]);
  seen.push({ readBefore: before?.aborted, left: request.callerLeft, readAfter: request.callerGone.aborted });
}
app.get('/early', async (request, reply) => watch(request, reply, true).then(() => 'done'));
app.get('/late', async (request, reply) => watch(request, reply, false).then(() => 'done'));
app.get('/charged', { config: { operation: 'qr.generate', auth: 'key' } }, async (request, reply) => {
  await watch(request, reply, false);
  await app.charge(request, reply).then(
    () => charges.push('billed'),
    (error: unknown) => charges.push(error instanceof Error ? error.name : 'unknown'),
  );
  return 'done';
});
const origin = await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = new URL(origin);
afterAll(() => app.close());

/** Sends a request and closes the connection before any answer. */
async function leave(path: string, headers = ''): Promise<void> {
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.end(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}\r\n`);
  socket.destroy();
}

describe('the caller-gone signal', () => {
  it('aborts when read before the caller left, and is born aborted when read after', async () => {
    seen.length = 0;
    await leave('/early');
    await leave('/late');
    await expect.poll(() => seen.length, { timeout: 3_000, interval: 10 }).toBe(2);
    expect(seen).toEqual(
      expect.arrayContaining([
        { readBefore: true, left: true, readAfter: true },
        { readBefore: undefined, left: true, readAfter: true },
      ]),
    );
  });

  it('never aborts for a caller who stays for the answer', async () => {
    seen.length = 0;
    const answer = await fetch(`${origin}/early`, { signal: AbortSignal.timeout(5_000) });
    expect(await answer.text()).toBe('done');
    expect(seen).toEqual([{ readBefore: false, left: false, readAfter: false }]);
  });

  it('bills nothing for a caller who left before its answer, though nothing read the signal', async () => {
    seen.length = 0;
    await leave('/charged', `Authorization: Bearer ${token}\r\n`);
    await expect.poll(() => charges.length, { timeout: 3_000, interval: 10 }).toBe(1);
    expect(charges).toEqual(['CallerGoneError']);
    expect(await meter.usage(key.id, billingPeriod())).toEqual({});
  });
});
