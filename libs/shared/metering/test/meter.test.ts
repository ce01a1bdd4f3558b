/**
 * Both meters: list units draw on the batch allowance together with batch calls, a ledger
 * records each unit of a list once, however often (and however concurrently) it is asked to, and
 * a call is recorded once per charge id and can be voided.
 */
import { randomUUID } from 'node:crypto';
import type { OperationId } from '@svc/contracts';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { dropPrefix, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { MemoryMeter, MeterLateError, RedisMeter, type ChargeCall, type Meter } from '../src/index.ts';
import { newChargeId } from '../src/charge-recorder.ts';

/** A call of `keyId` in 2026-11 under a new charge id (or the one given). */
const call = (keyId: string, operation: OperationId, allowance: number, chargeId = randomUUID()): ChargeCall => ({
  keyId,
  operation,
  period: '2026-11',
  allowance,
  chargeId,
});

const prefix = uniquePrefix('meter');
let redis: Redis | undefined;
afterAll(async () => {
  redis?.disconnect();
  await dropPrefix(testRedisUrl(), prefix);
});

describe.each([
  ['memory', () => Promise.resolve<Meter>(new MemoryMeter())],
  [
    'redis',
    async (): Promise<Meter> => {
      redis ??= createRedis(testRedisUrl(), 'request', 'test-meter');
      await waitForRedis(redis, 5_000);
      return new RedisMeter(redis, `${prefix}-${Math.random().toString(36).slice(2)}`);
    },
  ],
])('%s meter', (_name, make) => {
  it('list units and batch calls share the batch allowance', async () => {
    const meter = await make();
    expect(await meter.record(call('k1', 'email-verify.batch', 3))).toEqual({ calls: 1, billable: false, freeRemaining: 2 });
    expect(await meter.recordUnits('list:a', 'k1', 'email-verify.list', '2026-11', 3, 3)).toEqual({ recorded: 3, billable: 1 });
    expect(await meter.record(call('k1', 'email-verify.batch', 3))).toEqual({ calls: 2, billable: true, freeRemaining: 0 });
    // Another operation's allowance is its own.
    expect((await meter.record(call('k1', 'email-verify.single', 1))).billable).toBe(false);
    expect(await meter.usage('k1', '2026-11')).toEqual({
      'email-verify.batch': { calls: 2, billableCalls: 1 },
      'email-verify.list': { calls: 3, billableCalls: 1 },
      'email-verify.single': { calls: 1, billableCalls: 0 },
    });
    expect(await meter.ledger('list:a', 'k1')).toEqual({ units: 3, billableUnits: 1 });
  });

  it('records each unit of a ledger once, asked again or concurrently', async () => {
    const meter = await make();
    expect(await meter.recordUnits('list:b', 'k2', 'email-verify.list', '2026-11', 0, 2)).toEqual({ recorded: 2, billable: 2 });
    expect(await meter.recordUnits('list:b', 'k2', 'email-verify.list', '2026-11', 0, 2)).toEqual({ recorded: 0, billable: 0 });
    expect(await meter.recordUnits('list:b', 'k2', 'email-verify.list', '2026-11', 0, 1)).toEqual({ recorded: 0, billable: 0 });
    const racing = await Promise.all(
      Array.from({ length: 6 }, () => meter.recordUnits('list:b', 'k2', 'email-verify.list', '2026-11', 0, 5)),
    );
    expect(racing.reduce((sum, outcome) => sum + outcome.recorded, 0)).toBe(3);
    expect(await meter.ledger('list:b', 'k2')).toEqual({ units: 5, billableUnits: 5 });
    expect((await meter.usage('k2', '2026-11'))['email-verify.list']).toEqual({ calls: 5, billableCalls: 5 });
  });

  it('counts a list ledger’s addresses once into the month’s usage in addresses', async () => {
    const meter = await make();
    await meter.recordUnits('list:c', 'k3', 'email-verify.list', '2026-11', 0, 1, 40);
    await meter.recordUnits('list:c', 'k3', 'email-verify.list', '2026-11', 0, 2, 140);
    await meter.recordUnits('list:c', 'k3', 'email-verify.list', '2026-11', 0, 2, 140); // asked again: nothing more
    await meter.recordUnits('list:d', 'k3', 'email-verify.list', '2026-11', 0, 1, 7);
    expect((await meter.usage('k3', '2026-11'))['email-verify.list']).toEqual({ calls: 3, billableCalls: 3, addresses: 147 });
  });

  it('records a charge id once: sent again, it answers the first record and counts nothing more', async () => {
    const meter = await make();
    const first = call('k4', 'qr.generate', 1);
    expect(await meter.record(first)).toEqual({ calls: 1, billable: false, freeRemaining: 0 });
    expect(await meter.record(call('k4', 'qr.generate', 1))).toEqual({ calls: 2, billable: true, freeRemaining: 0 });
    const again = await Promise.all([meter.record(first), meter.record(first)]);
    expect(again).toEqual([
      { calls: 1, billable: false, freeRemaining: 0 },
      { calls: 1, billable: false, freeRemaining: 0 },
    ]);
    expect(await meter.usage('k4', '2026-11')).toEqual({ 'qr.generate': { calls: 2, billableCalls: 1 } });
  });

  it('voids a billed charge once, and a record of a voided id records nothing', async () => {
    const meter = await make();
    await meter.record(call('k5', 'qr.wifi', 0));
    const unsure = call('k5', 'qr.wifi', 0);
    await meter.record(unsure);
    expect(await meter.voidCharge(unsure)).toBe(true);
    expect(await meter.voidCharge(unsure)).toBe(false);
    await expect(meter.record(unsure)).rejects.toBeInstanceOf(MeterLateError);
    expect(await meter.usage('k5', '2026-11')).toEqual({ 'qr.wifi': { calls: 1, billableCalls: 1 } });
  });

  it('a void that comes before its record (never made, or still on its way) keeps the record from being made', async () => {
    const meter = await make();
    const neverSeen = call('k6', 'qr.generate', 5);
    expect(await meter.voidCharge(neverSeen)).toBe(false);
    await expect(meter.record(neverSeen)).rejects.toBeInstanceOf(MeterLateError);
    expect(await meter.usage('k6', '2026-11')).toEqual({});
  });

  it('a voided free call gives its free place back, to a later call billed for want of it', async () => {
    const meter = await make();
    const free = call('k7', 'qr.generate', 1);
    expect((await meter.record(free)).billable).toBe(false);
    expect((await meter.record(call('k7', 'qr.generate', 1))).billable).toBe(true);
    expect(await meter.voidCharge(free)).toBe(true);
    // The call that was billed is now the month's one free call; the next one is billed.
    expect(await meter.usage('k7', '2026-11')).toEqual({ 'qr.generate': { calls: 1, billableCalls: 0 } });
    expect(await meter.record(call('k7', 'qr.generate', 1))).toEqual({ calls: 2, billable: true, freeRemaining: 0 });

    // Within the allowance, a voided free call just frees its place.
    const early = call('k8', 'email-verify.batch', 3);
    await meter.record(early);
    await meter.record(call('k8', 'email-verify.batch', 3));
    expect(await meter.voidCharge(early)).toBe(true);
    expect(await meter.record(call('k8', 'email-verify.batch', 3))).toEqual({ calls: 2, billable: false, freeRemaining: 1 });
  });
});

describe('memory meter', () => {
  it('remembers the newest charge ids only, so that its memory stays bounded at any call rate', async () => {
    const meter = new MemoryMeter(3);
    const first = call('k9', 'qr.generate', 0);
    await meter.record(first);
    await meter.record(first);
    expect(await meter.usage('k9', '2026-11')).toEqual({ 'qr.generate': { calls: 1, billableCalls: 1 } });
    for (let i = 0; i < 3; i += 1) await meter.record(call('k9', 'qr.generate', 0));
    // Three newer ids pushed the first out: sent again now, it is a new record.
    await meter.record(first);
    expect(await meter.usage('k9', '2026-11')).toEqual({ 'qr.generate': { calls: 5, billableCalls: 5 } });
  });
});

describe('redis meter give-up time', () => {
  it('records a call that reaches Redis in time, and nothing for one that arrives after its sender gave up', async () => {
    redis ??= createRedis(testRedisUrl(), 'request', 'test-meter');
    await waitForRedis(redis, 5_000);
    const own = `${prefix}-late`;
    expect((await new RedisMeter(redis, own, 5_000).record(call('k3', 'qr.generate', 0))).calls).toBe(1);
    // A negative window stands for a command that sat in a frozen primary's socket past it.
    await expect(new RedisMeter(redis, own, -5_000).record(call('k3', 'qr.generate', 0))).rejects.toBeInstanceOf(MeterLateError);
    expect(await new RedisMeter(redis, own).usage('k3', '2026-11')).toEqual({ 'qr.generate': { calls: 1, billableCalls: 1 } });
  });
});

describe('charge ids', () => {
  it('are distinct and short: a random prefix of 96 bits per process, then a sequence number', () => {
    const ids = Array.from({ length: 50_000 }, () => newChargeId());
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => /^[A-Za-z0-9_-]{16}\.[0-9a-z]+$/.test(id) && id.startsWith(ids[0]!.slice(0, 17)))).toBe(true);
  });
});
