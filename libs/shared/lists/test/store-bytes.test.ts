/**
 * What a stored row costs in Redis (issue 28: at most about 100 bytes a row, duplicates included;
 * `npm run bench:list-bytes` measures 100,000-row lists): 5,000-row lists written through the
 * store as the product writes them, settled, and summed with MEMORY USAGE over their keys. And
 * what the compact layout must not lose: results read back whole, and a list written by the
 * release before it (plain JSON chunks and results) still read.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifyResult } from '@svc/contracts';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { dropPrefix, testRedisUrl, uniquePrefix, verifyResult } from '@svc/testkit';
import { RedisListStore } from '../src/redis-store.ts';
import { listBytes, writeList } from './support/stored-list.ts';

const prefix = uniquePrefix('store-bytes');
let redis: Redis;
beforeAll(async () => {
  redis = createRedis(testRedisUrl(), 'request', 'test-store-bytes');
  await waitForRedis(redis, 5_000);
});
afterAll(async () => {
  redis.disconnect();
  await dropPrefix(testRedisUrl(), prefix);
});

const ROWS = 5_000;
/** The contract's figure (decisions, "Fair share and hostile input"). */
const BOUND_BYTES_PER_ROW = 100;

const resultOf = (email: string, i: number): VerifyResult => {
  const domain = email.slice(email.indexOf('@') + 1);
  return verifyResult(email, {
    ...(i % 4 === 0 ? { verdict: 'undeliverable', reason: 'rejected_email', score: 5 } : {}),
    checks: {
      syntax: true,
      domainExists: true,
      mx: [`mx1.${domain}`, `mx2.${domain}`],
      smtp: i % 4 === 0 ? 'rejected' : 'accepted',
      catchAll: false,
      disposable: false,
      role: false,
      free: false,
      provider: null,
    },
  });
};

const storeList = (store: RedisListStore, row: (i: number) => string[]) => writeList(store, ROWS, row, resultOf);
const bytesPerRow = async (id: string): Promise<number> => (await listBytes(redis, prefix, id)) / ROWS;

describe('redis list store at rest', () => {
  it(
    `keeps a settled row of distinct addresses and of one address repeated under ${BOUND_BYTES_PER_ROW} bytes`,
    { timeout: 60_000 },
    async () => {
      const store = new RedisListStore(redis, prefix);
      const distinct = await storeList(store, (i) => [`user${i}@domain${i % 50}.example`]);
      const repeated = await storeList(store, () => [
        'same.person@example.com',
        'Jane',
        'Doe',
        'Example Corporation International Ltd',
        '1 Long Street, Some Town',
      ]);
      expect(await bytesPerRow(distinct.id)).toBeLessThan(BOUND_BYTES_PER_ROW);
      expect(await bytesPerRow(repeated.id)).toBeLessThan(BOUND_BYTES_PER_ROW);

      // Read back whole: input rows, work, and every result (its address is the reader's).
      expect(await store.inputChunk(distinct.id, 4)).toHaveLength(1_000);
      expect((await store.inputChunk(distinct.id, 0))[7]).toEqual([7, 'user7@domain7.example']);
      expect(await store.workChunk(distinct.id, 0)).toEqual(distinct.work[0]);
      const [first, fifth] = await store.results(distinct.id, [0, 5]);
      expect(first).toMatchObject({ result: { ...resultOf('user0@domain0.example', 0), email: '' } });
      expect(fifth?.result).toEqual({ ...resultOf('user5@domain5.example', 5), email: '' });
      expect((await store.get(distinct.id))?.status).toBe('completed');
    },
  );

  it('reads a list written by the release before (plain JSON chunks and results)', async () => {
    const store = new RedisListStore(redis, prefix);
    const id = `lst_${randomBytes(12).toString('hex')}`;
    const old = resultOf('old@example.com', 1);
    await redis.hset(`${prefix}:list:{${id}}:input`, '0', JSON.stringify([[0, 'old@example.com']]));
    await redis.hset(`${prefix}:list:{${id}}:work`, '0', JSON.stringify([[0, 'old@example.com', 1]]));
    await redis.hset(`${prefix}:list:{${id}}:results`, '0', JSON.stringify([1, old]));
    expect(await store.inputChunk(id, 0)).toEqual([[0, 'old@example.com']]);
    expect(await store.workChunk(id, 0)).toEqual([[0, 'old@example.com', 1]]);
    expect(await store.results(id, [0, 1])).toEqual([{ seq: 1, result: old }, undefined]);
  });
});
