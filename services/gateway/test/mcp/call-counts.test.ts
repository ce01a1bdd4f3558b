/**
 * The tool-call counts of the cancellation relay leave nothing behind in Redis (issue 32): a call
 * that ended removes its count, and a call that outlived its count (the count lapsed) does not
 * create one without expiry.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { dropPrefix, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { RedisCancellationRelay, callSlot } from '../../src/mcp/cancellation-relay.ts';

const prefix = uniquePrefix('call-counts');
const redis = createRedis(testRedisUrl(), 'request', 'call-counts-test');
const subscriber = createRedis(testRedisUrl(), 'blocking', 'call-counts-sub');
afterAll(async () => {
  await dropPrefix(testRedisUrl(), prefix);
  redis.disconnect();
  subscriber.disconnect();
});

const keys = () => redis.keys(`${prefix}:mcp:call:*`);

describe('tool-call counts in Redis', () => {
  it('a count goes away when its last call ends; one that lapsed is not made again', async () => {
    await waitForRedis(redis, 5_000);
    const relay = new RedisCancellationRelay(redis, subscriber, prefix);
    const slot = callSlot('key-1', 7);
    relay.started(slot);
    relay.started(slot);
    await expect.poll(async () => redis.get(`${prefix}:mcp:call:{${slot}}`)).toBe('2');
    expect(await redis.pttl(`${prefix}:mcp:call:{${slot}}`)).toBeGreaterThan(0);
    relay.ended(slot);
    await expect.poll(async () => redis.get(`${prefix}:mcp:call:{${slot}}`)).toBe('1');
    relay.ended(slot);
    await expect.poll(keys).toEqual([]);

    const lapsed = callSlot('key-1', 'lapsed');
    relay.ended(lapsed); // its count expired while the call ran
    await redis.ping(); // after the relay's command on the same connection
    expect(await keys()).toEqual([]);
  });
});
