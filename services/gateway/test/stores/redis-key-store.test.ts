/**
 * The gateway's key cache: a key found is used for the cache's TTL without asking Redis again,
 * so a revocation by another process (the key tool) takes effect within that TTL and no later;
 * an unknown key is never remembered, so a key just issued works at once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { dropPrefix, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { KEY_CACHE_TTL_MS, RedisKeyStore } from '../../src/stores/redis-key-store.ts';

const prefix = uniquePrefix('key-cache');
const redis = createRedis(testRedisUrl(), 'request', 'test-key-cache');
afterAll(async () => {
  redis.disconnect();
  await dropPrefix(testRedisUrl(), prefix);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RedisKeyStore cache', () => {
  it('is short: at most 1 s, as README and docs/api.md say', () => {
    expect(KEY_CACHE_TTL_MS).toBeLessThanOrEqual(1_000);
  });

  it('sees a revocation by another process within its TTL, and a key issued meanwhile at once', async () => {
    await waitForRedis(redis, 5_000);
    const gateway = new RedisKeyStore(redis, prefix, 200);
    const tool = new RedisKeyStore(redis, prefix, 0);
    const key = `sk_${'R'.repeat(32)}`;
    const later = `sk_${'L'.repeat(32)}`;

    expect(await gateway.authenticate(later)).toBeNull();
    await tool.create('later', later);
    expect(await gateway.authenticate(later)).toMatchObject({ name: 'later', revoked: false });

    await tool.create('revoked-soon', key);
    const [first, second] = await Promise.all([gateway.authenticate(key), gateway.authenticate(key)]);
    expect(first).toMatchObject({ name: 'revoked-soon', revoked: false });
    expect(second).toBe(first);
    await tool.revoke('revoked-soon');
    await sleep(250);
    expect(await gateway.authenticate(key)).toMatchObject({ revoked: true });
  });
});
