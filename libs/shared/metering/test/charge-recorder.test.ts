/**
 * A meter record whose reply is lost (the store ran it and died before answering: a proxy that
 * lets the command through and cuts at its reply) is neither billed twice nor billed without its
 * answer: sent again under its charge id once the store answers, it is confirmed and counted
 * once; not confirmed within the call's budget, it is voided when the store answers again.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { dropPrefix, startTcpProxy, testRedisUrl, uniquePrefix, waitUntil, type TcpProxy } from '@svc/testkit';
import { ChargeRecorder, MeterUnsureError, RedisMeter, type VoidReport } from '../src/index.ts';

const filePrefix = uniquePrefix('charges');
const COMMAND_TIMEOUT_MS = 500;
const period = '2026-11';
const qrCall = (keyId: string) => ({ keyId, operation: 'qr.generate' as const, period, allowance: 1 });

interface Rig {
  proxy: TcpProxy;
  redis: Redis;
  recorder: ChargeRecorder;
  reports: VoidReport[];
  /** The meter's counts, read past the proxy. */
  usage: (keyId: string) => Promise<unknown>;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
afterAll(() => dropPrefix(testRedisUrl(), filePrefix));

/** A recorder on a request connection (the gateway's kind: no resend, no offline queue) through a cuttable proxy. */
async function rig(): Promise<Rig> {
  const proxy = await startTcpProxy(testRedisUrl());
  const prefix = `${filePrefix}:${Math.random().toString(36).slice(2)}`;
  const redis = createRedis({ kind: 'single', url: proxy.url, commandTimeoutMs: COMMAND_TIMEOUT_MS }, 'request', 'test-charges');
  const direct: Redis = createRedis(testRedisUrl(), 'request', 'test-charges-direct');
  await Promise.all([waitForRedis(redis, 5_000), waitForRedis(direct, 5_000)]);
  const reports: VoidReport[] = [];
  const recorder = new ChargeRecorder(new RedisMeter(redis, prefix, COMMAND_TIMEOUT_MS / 2), {
    attemptMs: COMMAND_TIMEOUT_MS,
    retryPauseMs: 100,
    voidEveryMs: 200,
    report: (event) => reports.push(event),
  });
  const reader = new RedisMeter(direct, prefix);
  closers.push(async () => {
    await recorder.close();
    redis.disconnect();
    direct.disconnect();
    await proxy.close();
  });
  return { proxy, redis, recorder, reports, usage: (keyId) => reader.usage(keyId, period) };
}

const qrUsage = (calls: number, billableCalls: number) => ({ 'qr.generate': { calls, billableCalls } });

describe('a meter record whose reply is lost', () => {
  it('is sent again once the store answers, confirmed with what it recorded, and counted once', async () => {
    const { proxy, redis, recorder, usage } = await rig();
    await recorder.record(qrCall('k1'), Date.now() + 5_000);
    proxy.cutAtNextReply();
    const charging = recorder.record(qrCall('k1'), Date.now() + 5_000);
    // The record ran: the store answered it, and the proxy threw the answer away and cut.
    await waitUntil(async () => JSON.stringify(await usage('k1')) === JSON.stringify(qrUsage(2, 1)), 2_000, 'the record to run');
    // The store is back only once the connection has lost it: what is sent next goes anew.
    await waitUntil(() => redis.status !== 'ready', 2_000, 'the connection to see the cut');
    proxy.restore();
    expect(await charging).toEqual({ calls: 2, billable: true, freeRemaining: 0 });
    expect(await usage('k1')).toEqual(qrUsage(2, 1));
    expect(recorder.pendingVoids).toBe(0);
  });

  it('not confirmed within its budget, fails unsure and is voided once the store answers again', async () => {
    const { proxy, recorder, reports, usage } = await rig();
    const free = await recorder.record(qrCall('k2'), Date.now() + 5_000);
    expect(free).toEqual({ calls: 1, billable: false, freeRemaining: 0 });
    proxy.cutAtNextReply();
    const started = Date.now();
    await expect(recorder.record(qrCall('k2'), started + 1_000)).rejects.toBeInstanceOf(MeterUnsureError);
    // Given up within the budget: no attempt was started that could end after it.
    expect(Date.now() - started).toBeLessThanOrEqual(1_000 + 100);
    expect(recorder.pendingVoids).toBe(1);
    expect(await usage('k2')).toEqual(qrUsage(2, 1));
    proxy.restore();
    await waitUntil(() => Promise.resolve(recorder.pendingVoids === 0), 5_000, 'the unsure charge to be voided');
    expect(await usage('k2')).toEqual(qrUsage(1, 0));
    expect(reports).toMatchObject([{ outcome: 'voided', cancelledRecord: true, call: { keyId: 'k2', operation: 'qr.generate' } }]);
  });

  it('a record that surely never reached the store is not kept to void', async () => {
    const { proxy, redis, recorder, usage } = await rig();
    proxy.cut();
    await waitUntil(() => Promise.resolve(redis.status !== 'ready'), 2_000, 'the connection to see the cut');
    await expect(recorder.record(qrCall('k3'), Date.now() + 5_000)).rejects.toThrow(/writeable/);
    expect(recorder.pendingVoids).toBe(0);
    expect(await usage('k3')).toEqual({});
  });

  it('what is still unsure when the recorder closes is reported abandoned', async () => {
    const { proxy, recorder, reports } = await rig();
    proxy.cutAtNextReply();
    await expect(recorder.record(qrCall('k4'), Date.now() + 200)).rejects.toBeInstanceOf(MeterUnsureError);
    await recorder.close();
    expect(reports).toMatchObject([{ outcome: 'abandoned', reason: 'closed', call: { keyId: 'k4' } }]);
  });
});
