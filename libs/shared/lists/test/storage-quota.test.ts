/**
 * Fair share of storage (issue 28): a key keeps at most LIST_MAX_STORED_ROWS_PER_KEY rows of
 * lists, duplicates and rows without an address included; a list that would pass it is refused
 * `429 quota_exceeded` before its rows past the quota are staged, and a list whose data is gone
 * stops counting. On both stores, through the list service as the gateway calls it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '@svc/contracts';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { MemoryMeter } from '@svc/metering';
import { dropPrefix, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { MemoryListQueue, MemoryListStore, type ListStore } from '../src/index.ts';
import { ListService } from '../src/list-service.ts';
import { RedisListStore } from '../src/redis-store.ts';

const prefix = uniquePrefix('quota');
let redis: Redis | undefined;
afterAll(async () => {
  redis?.disconnect();
  await dropPrefix(testRedisUrl(), prefix);
});

const silent = { warn: () => undefined };
const layout = { addressColumn: 0, columns: ['email'], delimiter: ',' as const, bom: false };
const rows = (n: number, cells: string[]) => Array.from({ length: n }, () => cells);

function service(store: ListStore, quota: number): ListService {
  return new ListService({
    store,
    queue: new MemoryListQueue({ concurrency: 1 }),
    meter: new MemoryMeter(),
    maxActivePerKey: 100,
    maxStoredRowsPerKey: quota,
    freeAllowances: { 'email-verify.batch': 0, 'email-verify.single': 0, 'qr.generate': 0, 'qr.wifi': 0, 'email-verify.list': 0 },
    allowPrivateCallbacks: false,
  });
}

describe.each([
  ['memory', () => Promise.resolve<ListStore>(new MemoryListStore())],
  [
    'redis',
    async (): Promise<ListStore> => {
      redis ??= createRedis(testRedisUrl(), 'request', 'test-quota');
      await waitForRedis(redis, 5_000);
      return new RedisListStore(redis, prefix);
    },
  ],
])('%s store: rows stored per key', (name, make) => {
  it('counts duplicates and empty rows, refuses the list that would pass the quota 429 quota_exceeded', async () => {
    const store = await make();
    const lists = service(store, 2_500);
    const owner = { id: `key-quota-${name}`, freeAllowance: {} };
    // 1,000 rows of one address and 500 without one: 1,500 rows stored, one distinct address.
    await lists.create(owner, { layout, rows: [...rows(1_000, ['same@example.com']), ...rows(500, [''])] }, silent);
    expect(await store.storedRows(owner.id)).toBe(1_500);
    await lists.create(owner, { layout, rows: rows(1_000, ['same@example.com']) }, silent); // exactly at the quota
    const refused = await lists.create(owner, { layout, rows: rows(1, ['one.more@example.com']) }, silent).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'quota_exceeded', status: 429, details: { maxStoredRows: 2_500, storedRows: 2_500 } });
    expect((refused as ApiError).message).toMatch(/2500 rows .*LIST_MAX_STORED_ROWS_PER_KEY.*Delete lists/);
    // Another key has a quota of its own.
    await lists.create({ id: `key-other-${name}`, freeAllowance: {} }, { layout, rows: rows(10, ['a@example.com']) }, silent);
  });

  it('refuses a list as soon as its rows pass the quota, before the rest is read', async () => {
    const store = await make();
    const lists = service(store, 1_000);
    const owner = { id: `key-early-${name}`, freeAllowance: {} };
    let read = 0;
    function* endless(): Generator<string[]> {
      for (;;) {
        read += 1;
        yield ['same@example.com'];
      }
    }
    await expect(lists.create(owner, { layout, rows: endless() }, silent)).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect(read).toBeLessThanOrEqual(1_001);
    expect(await store.storedRows(owner.id)).toBe(0);
  });
});

describe('redis store: a list whose data is gone stops counting', () => {
  it('drops it from the key’s count', async () => {
    redis ??= createRedis(testRedisUrl(), 'request', 'test-quota');
    await waitForRedis(redis, 5_000);
    const store = new RedisListStore(redis, prefix);
    const lists = service(store, 10_000);
    const owner = { id: 'key-expired', freeAllowance: {} };
    const list = await lists.create(owner, { layout, rows: rows(300, ['a@example.com']) }, silent);
    expect(await store.storedRows(owner.id)).toBe(300);
    await redis.del(`${prefix}:list:{${list.id}}`); // as its retention's expiry does
    expect(await store.storedRows(owner.id)).toBe(0);
    expect(await redis.hlen(`${prefix}:lists:rows:{${owner.id}}`)).toBe(0);
  });
});
