/**
 * `keys migrate-tags`: a deployment's keys written under the untagged names of the previous
 * version are found again under the tagged names by the stores of this one, on one Redis.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { RedisListStore } from '@svc/lists/redis';
import { RedisMeter } from '@svc/metering';
import { WebhookSecretStore } from '@svc/webhooks/secrets';
import { dropPrefix, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { hashApiKey, keyIdOf } from '../../src/auth/api-keys.ts';
import { migrateTags, taggedName } from '../../src/stores/migrate-tags.ts';
import { RedisKeyStore } from '../../src/stores/redis-key-store.ts';

const prefix = uniquePrefix('migrate-tags');
const mergePrefix = uniquePrefix('migrate-tags-merge');
const redis = createRedis(testRedisUrl(), 'request', 'test-migrate-tags');
afterAll(async () => {
  redis.disconnect();
  await dropPrefix(testRedisUrl(), prefix);
  await dropPrefix(testRedisUrl(), mergePrefix);
});

describe('migrate-tags', () => {
  it('names every kind of key by its tag, and leaves tagged and foreign names alone', () => {
    const p = 'svc';
    expect(taggedName(p, `svc:apikey:${'a'.repeat(64)}`)).toBe(`svc:apikey:{${'a'.repeat(64)}}`);
    expect(taggedName(p, 'svc:usage:2026-11:0123456789abcdef')).toBe('svc:usage:{0123456789abcdef}:2026-11');
    expect(taggedName(p, `svc:list:lst_${'1'.repeat(24)}:results`)).toBe(`svc:list:{lst_${'1'.repeat(24)}}:results`);
    expect(taggedName(p, 'svc:lists:active:0123456789abcdef')).toBe('svc:lists:active:{0123456789abcdef}');
    expect(taggedName(p, 'svc:lists:unfinished')).toBe('svc:lists:{unfinished}');
    expect(taggedName(p, 'svc:smtp-slots:192.0.2.1')).toBe('svc:smtp-slots:{192.0.2.1}');
    expect(taggedName(p, 'svc:bull:verify-list:wait')).toBe('svc:bull:{verify-list}:verify-list:wait');
    expect(taggedName(p, 'svc:bull:{qr}:qr:wait')).toBeUndefined();
    expect(taggedName(p, 'other:apikey:x')).toBeUndefined();
    expect(taggedName(p, 'svc:apikeys')).toBe('svc:{apikeys}');
    expect(taggedName(p, 'svc:webhook-secret:0123456789abcdef')).toBe('svc:webhook-secret:{0123456789abcdef}');
  });

  it('keys, their index and webhook secrets, meters, ledgers, lists, the unfinished lists and queues written untagged are read again after it, and a second run renames nothing', async () => {
    await waitForRedis(redis, 5_000);
    const token = `sk_${'A'.repeat(32)}`;
    const hash = hashApiKey(token);
    const keyId = keyIdOf(hash);
    const listId = `lst_${'5'.repeat(24)}`;
    const fields = { hash, id: keyId, name: 'old', createdAt: '2026-01-01T00:00:00.000Z', revoked: '0', freeAllowance: '{}' };
    await redis.hset(`${prefix}:apikey:${hash}`, fields);
    await redis.sadd(`${prefix}:apikeys`, hash);
    const secret = `whsec_${'s'.repeat(40)}`;
    await redis.set(`${prefix}:webhook-secret:${keyId}`, secret);
    await redis.hset(`${prefix}:usage:2026-11:${keyId}`, { 'qr.generate:calls': 7, 'qr.generate:billable': 2 });
    await redis.hset(`${prefix}:list:${listId}`, {
      id: listId,
      keyId,
      status: 'completed',
      count: 1,
      distinct: 1,
      inputChunks: 1,
      workChunks: 1,
      createdAt: 1,
      hasName: 0,
      layout: JSON.stringify({ columns: ['email'], addressColumn: 0, delimiter: ',', bom: false }),
    });
    await redis.zadd(`${prefix}:lists:key:${keyId}`, 1, listId);
    // The janitor's set: this list's end not yet handled when the deployment stopped.
    await redis.sadd(`${prefix}:lists:unfinished`, listId);
    await redis.hset(`${prefix}:ledger:list:${listId}`, { units: 1, billable: 1 });
    await redis.rpush(`${prefix}:bull:qr:wait`, 'job-1');

    expect(await migrateTags(redis, prefix)).toEqual({ renamed: 9, conflicts: [], orphanLedgers: [] });

    expect(await new RedisKeyStore(redis, prefix).authenticate(token)).toMatchObject({ id: keyId, name: 'old' });
    // Listing (and so revoking by name) reads the index: it moved with the keys.
    expect((await new RedisKeyStore(redis, prefix).list()).map((record) => record.id)).toEqual([keyId]);
    expect(await new WebhookSecretStore(redis, prefix).get(keyId)).toBe(secret);
    const meter = new RedisMeter(redis, prefix);
    expect(await meter.usage(keyId, '2026-11')).toEqual({ 'qr.generate': { calls: 7, billableCalls: 2 } });
    expect(await meter.ledger(`list:${listId}`, keyId)).toEqual({ units: 1, billableUnits: 1 });
    const lists = new RedisListStore(redis, prefix);
    expect(await lists.get(listId)).toMatchObject({ id: listId, keyId, status: 'completed' });
    expect((await lists.page(keyId, 10, undefined)).records.map((record) => record.id)).toEqual([listId]);
    expect(await lists.unfinished()).toEqual([listId]);
    expect(await redis.lrange(`${prefix}:bull:{qr}:qr:wait`, 0, -1)).toEqual(['job-1']);

    expect(await migrateTags(redis, prefix)).toEqual({ renamed: 0, conflicts: [], orphanLedgers: [] });
  });

  it('merges the old set of unfinished lists into one a started process of this version already wrote', async () => {
    await waitForRedis(redis, 5_000);
    const [older, newer] = [`lst_${'6'.repeat(24)}`, `lst_${'7'.repeat(24)}`];
    await redis.sadd(`${mergePrefix}:lists:unfinished`, older);
    await redis.sadd(`${mergePrefix}:lists:{unfinished}`, newer);

    expect(await migrateTags(redis, mergePrefix)).toEqual({ renamed: 1, conflicts: [], orphanLedgers: [] });

    expect((await new RedisListStore(redis, mergePrefix).unfinished()).sort()).toEqual([older, newer]);
    expect(await redis.exists(`${mergePrefix}:lists:unfinished`)).toBe(0);
  });
});
