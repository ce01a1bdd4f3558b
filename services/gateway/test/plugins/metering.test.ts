/**
 * The charge on its own: a request is billed for the operation it carries, by the billing rule
 * (a key's own allowance over the default, list units and batches in one pool), and only once;
 * asking to charge another operation, or the same request twice, is a bug and bills nothing more.
 * A meter record whose reply Redis lost is sent again within the request's deadline, and the
 * call answered with the cost that record made, counted once.
 */
import type { OperationId } from '@svc/contracts';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { MemoryMeter, RedisMeter, billingPeriod, type FreeAllowances, type Meter } from '@svc/metering';
import { dropPrefix, startTcpProxy, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { createAccessLog, createGatewayMetrics, createRegistry } from '@svc/telemetry';
import Fastify from 'fastify';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import meteringPlugin, { COST_HEADER, FREE_REMAINING_HEADER } from '../../src/plugins/metering.ts';
import observabilityPlugin from '../../src/plugins/observability.ts';
import { generateApiKey } from '../../src/auth/api-keys.ts';
import authPlugin from '../../src/plugins/auth.ts';
import { MemoryKeyStore } from '../../src/stores/key-store.ts';

const DEFAULTS: FreeAllowances = {
  'email-verify.batch': 1,
  'email-verify.single': 1,
  'qr.generate': 1,
  'qr.wifi': 1,
  'email-verify.list': 1,
};

const DEADLINES: Record<OperationId, number> = {
  'email-verify.batch': 5_000,
  'email-verify.single': 5_000,
  'qr.generate': 5_000,
  'qr.wifi': 5_000,
  'email-verify.list': 5_000,
};

async function gateway(meter: Meter = new MemoryMeter(), meterTimeoutMs = 0) {
  const app = Fastify();
  const metrics = createGatewayMetrics(createRegistry());
  const quiet = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  await app.register(observabilityPlugin, { metrics, accessLog: createAccessLog('warn', 'test', quiet) });
  await app.register(meteringPlugin, { meter, freeAllowances: DEFAULTS, metrics, deadlines: DEADLINES, meterTimeoutMs });
  const keys = new MemoryKeyStore();
  const token = generateApiKey();
  const key = await keys.create('test', token, { 'qr.generate': 2 });
  await app.register(authPlugin, { keys });
  const route = (url: string, operation: OperationId, charges: (charge: () => Promise<unknown>) => Promise<unknown>) =>
    app.get(url, { config: { operation, auth: 'key' } }, async (request, reply) => {
      await charges(() => app.charge(request, reply));
      return { ok: true };
    });
  route('/qr', 'qr.generate', (charge) => charge());
  route('/batch', 'email-verify.batch', (charge) => charge());
  route('/twice', 'qr.wifi', async (charge) => {
    await charge();
    await charge();
  });
  app.get('/other', { config: { operation: 'qr.wifi', auth: 'key' } }, async (request, reply) => {
    await app.charge(request, reply, 'qr.generate');
    return { ok: true };
  });
  app.get('/named', { config: { operation: 'qr.wifi', auth: 'key' } }, async (request, reply) => {
    await app.charge(request, reply, 'qr.wifi');
    return { ok: true };
  });
  await app.ready();
  const get = (url: string) => app.inject({ url, headers: { authorization: `Bearer ${token}` } });
  return { app, get, meter, keyId: key.id };
}

describe('charge', () => {
  it("bills the request's operation against the key's own allowance, then at its price", async () => {
    const { get } = await gateway();
    const answers = [await get('/qr'), await get('/qr'), await get('/qr')];
    expect(
      answers.map((answer) => [answer.headers[COST_HEADER.toLowerCase()], answer.headers[FREE_REMAINING_HEADER.toLowerCase()]]),
    ).toEqual([
      ['0', '1'],
      ['0', '0'],
      ['0.0005', '0'],
    ]);
  });

  it('counts list units and batches in one pool', async () => {
    const { get, meter, keyId } = await gateway();
    await meter.recordUnits('list:l1', keyId, 'email-verify.list', billingPeriod(), 1, 1);
    const answer = await get('/batch');
    expect(answer.headers[COST_HEADER.toLowerCase()]).toBe('0.15');
  });

  it('bills a request once: a second charge, or one naming another operation, fails and records nothing more', async () => {
    const { get, meter, keyId } = await gateway();
    expect((await get('/twice')).statusCode).toBe(500);
    expect((await get('/other')).statusCode).toBe(500);
    expect((await get('/named')).statusCode).toBe(200);
    expect(await meter.usage(keyId, billingPeriod())).toEqual({ 'qr.wifi': { calls: 2, billableCalls: 1 } });
  });
});

describe('charge on a Redis meter whose reply is lost', () => {
  const prefix = uniquePrefix('charge-lost');
  afterAll(() => dropPrefix(testRedisUrl(), prefix));

  it('sends the record again once Redis answers, within the deadline, and answers 200 with its cost, billed once', async () => {
    const proxy = await startTcpProxy(testRedisUrl());
    const redis = createRedis({ kind: 'single', url: proxy.url, commandTimeoutMs: 500 }, 'request', 'test-charge-lost');
    try {
      await waitForRedis(redis, 5_000);
      const { app, get, meter, keyId } = await gateway(new RedisMeter(redis, prefix, 250), 500);
      expect((await get('/qr')).headers[COST_HEADER.toLowerCase()]).toBe('0');
      proxy.cutAtNextReply();
      setTimeout(() => proxy.restore(), 700);
      const answer = await get('/qr');
      expect(answer.statusCode).toBe(200);
      // The second free call of the key's two: the record made before its reply was lost.
      expect([answer.headers[COST_HEADER.toLowerCase()], answer.headers[FREE_REMAINING_HEADER.toLowerCase()]]).toEqual(['0', '0']);
      expect(await meter.usage(keyId, billingPeriod())).toEqual({ 'qr.generate': { calls: 2, billableCalls: 0 } });
      await app.close();
    } finally {
      redis.disconnect();
      await proxy.close();
    }
  });
});
