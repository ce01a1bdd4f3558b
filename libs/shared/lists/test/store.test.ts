/**
 * Both list stores keep the same rules: a result is recorded once however often it is
 * committed, a commit after the list ended records nothing, statuses move queued -> running ->
 * retrying -> completed, a key holds at most N active lists (an upload's hold lapses), pages
 * run newest first, and only one process at a time may hand the end event over.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { VerifyResult } from '@svc/contracts';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { dropPrefix, testRedisUrl, uniquePrefix, verifyResult } from '@svc/testkit';
import { MemoryListStore, type ListStore, type NewList } from '../src/index.ts';
import { RedisListStore } from '../src/redis-store.ts';
import { newList } from './support/new-list.ts';

const prefix = uniquePrefix('liststore');
let redis: Redis | undefined;
afterAll(async () => {
  redis?.disconnect();
  await dropPrefix(testRedisUrl(), prefix);
});

const result = (email: string, verdict: VerifyResult['verdict']): VerifyResult =>
  verifyResult(email, {
    verdict,
    score: verdict === 'deliverable' ? 90 : 0,
    reason: verdict === 'deliverable' ? 'accepted_email' : 'rejected_email',
  });

let counter = 0;
function listOf(keyId: string, overrides: Partial<NewList> = {}): NewList {
  counter += 1;
  return newList({
    id: `lst_${counter.toString(16).padStart(24, '0')}`,
    keyId,
    distinct: 2,
    workChunks: 2,
    createdAt: 1_700_000_000_000 + counter,
    allowance: 10,
    ...overrides,
  });
}

describe.each([
  ['memory', () => Promise.resolve<ListStore>(new MemoryListStore())],
  [
    'redis',
    async (): Promise<ListStore> => {
      redis ??= createRedis(testRedisUrl(), 'request', 'test-list-store');
      await waitForRedis(redis, 5_000);
      return new RedisListStore(redis, prefix);
    },
  ],
])('%s list store', (_name, make) => {
  it('records a result once, moves the status, ends the list when all settled', async () => {
    const store = await make();
    const list = listOf('key-a');
    await store.putInput(list.id, 0, [
      [0, 'a@x.test'],
      [1, 'b@x.test'],
      [0, 'A@X.test'],
    ]);
    await store.create(list, [[[0, 'a@x.test', 2]], [[1, 'b@x.test', 1]]]);
    expect(await store.get(list.id)).toMatchObject({ status: 'queued', processed: 0, enqueued: false });
    await store.markRunning(list.id, 5);
    expect(await store.get(list.id)).toMatchObject({ status: 'running', startedAt: 5 });

    const first = {
      now: 10,
      chunk: 0,
      round: 0,
      settled: [{ index: 0, entries: 2, result: result('a@x.test', 'deliverable') }],
      retries: [],
      eventId: 'evt_1',
    };
    expect(await store.commit(list.id, first)).toEqual({ status: 'running', applied: true });
    expect(await store.commit(list.id, first)).toEqual({ status: 'running', applied: true }); // a job run again
    expect(await store.get(list.id)).toMatchObject({ processed: 2, settled: 1, summary: { deliverable: 2, risky: 0, undeliverable: 0 } });

    // Chunk 1's first pass leaves its address for a retry: only retries remain.
    await store.commit(list.id, {
      now: 11,
      chunk: 1,
      round: 0,
      settled: [],
      retries: [{ index: 1, round: 1, dueAt: 99, entries: 1, result: { ...result('b@x.test', 'risky'), reason: 'greylisted' } }],
      eventId: 'evt_2',
    });
    expect((await store.get(list.id))?.status).toBe('retrying');
    expect((await store.progress(list.id, [0, 1])).retries.get(1)).toEqual({ round: 1, dueAt: 99 });
    const pending = await store.pendingWork(list.id);
    expect([...pending.chunksDone].sort()).toEqual([0, 1]);
    expect(pending.retryGroups).toEqual([{ chunk: 1, round: 1, dueAt: 99 }]);

    expect(
      await store.commit(list.id, {
        now: 12,
        chunk: 1,
        round: 1,
        settled: [{ index: 1, entries: 1, result: result('b@x.test', 'undeliverable') }],
        retries: [],
        eventId: 'evt_3',
      }),
    ).toEqual({
      status: 'completed',
      applied: true,
    });
    expect((await store.pendingWork(list.id)).retryGroups).toEqual([]); // the retry job's pass is recorded
    const done = await store.get(list.id);
    expect(done).toMatchObject({ status: 'completed', completedAt: 12, touchedAt: 12, eventId: 'evt_3', processed: 3, settled: 2 });
    const progress = await store.progress(list.id, [0, 1]);
    expect([...progress.settled]).toEqual([0, 1]);
    expect(progress.retries.size).toBe(0);
    const stored = await store.results(list.id, [1, 0]);
    expect(stored.map((entry) => entry?.seq)).toEqual([2, 1]);
    expect(await store.inputChunk(list.id, 0)).toEqual([
      [0, 'a@x.test'],
      [1, 'b@x.test'],
      [0, 'A@X.test'],
    ]);
    expect(await store.unfinished()).toContain(list.id);
    await store.finish(list.id, 60_000);
    expect(await store.unfinished()).not.toContain(list.id);
    expect((await store.get(list.id))?.finished).toBe(true);
  });

  it('records nothing for a list cancelled meanwhile', async () => {
    const store = await make();
    const list = listOf('key-b');
    await store.create(list, [[[0, 'a@x.test', 1]], [[1, 'b@x.test', 1]]]);
    const cancelled = await store.end(list.id, 'cancelled', 20, 'evt_c');
    expect(cancelled).toMatchObject({ status: 'cancelled', completedAt: 20, eventId: 'evt_c' });
    expect(
      await store.commit(list.id, {
        now: 21,
        chunk: 0,
        round: 0,
        settled: [{ index: 0, entries: 1, result: result('a@x.test', 'deliverable') }],
        retries: [],
        eventId: 'evt_x',
      }),
    ).toEqual({
      status: 'cancelled',
      applied: false,
    });
    expect(await store.get(list.id)).toMatchObject({ processed: 0, status: 'cancelled', eventId: 'evt_c' });
    expect((await store.end(list.id, 'failed', 22, 'evt_f', 'boom'))?.status).toBe('cancelled');
  });

  it('holds at most N active lists per key; a hold of an upload that never completed lapses', async () => {
    const store = await make();
    const key = `key-slots-${Math.random()}`;
    expect(await store.reserve(key, 'lst_1', 2, 1_000, 100)).toBe(true);
    expect(await store.reserve(key, 'lst_2', 2, 1_000, 100)).toBe(true);
    expect(await store.reserve(key, 'lst_3', 2, 1_050, 100)).toBe(false);
    expect(await store.reserve(key, 'lst_3', 2, 1_200, 100)).toBe(true); // the two holds lapsed
    await store.discard('lst_3', key);
    const list = listOf(key);
    expect(await store.reserve(key, list.id, 1, 2_000, 100)).toBe(true);
    await store.create(list, [[[0, 'a@x.test', 1]]]);
    expect(await store.reserve(key, 'lst_4', 1, 10_000_000_000_000, 100)).toBe(false); // a created list holds its slot
    await store.end(list.id, 'cancelled', 3, 'evt');
    expect(await store.reserve(key, 'lst_4', 1, 3_000, 100)).toBe(true);
  });

  it('pages newest first with a cursor, ties included', async () => {
    const store = await make();
    const key = `key-page-${Math.random()}`;
    const lists = [
      listOf(key, { createdAt: 100 }),
      listOf(key, { createdAt: 200 }),
      listOf(key, { createdAt: 200 }),
      listOf(key, { createdAt: 300 }),
    ];
    for (const list of lists) await store.create(list, [[[0, 'a@x.test', 1]]]);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await store.page(key, 1, cursor);
      seen.push(...page.records.map((record) => record.id));
      if (page.next === null) break;
      cursor = page.next;
    }
    const expected = [...lists].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)).map((list) => list.id);
    expect(seen).toEqual(expected);
  });

  it('lets one process at a time hand the end event over', async () => {
    const store = await make();
    const list = listOf('key-cb');
    await store.create(list, [[[0, 'a@x.test', 1]]]);
    expect(await store.claimCallback(list.id, 1_000, 500)).toBe(true);
    expect(await store.claimCallback(list.id, 1_100, 500)).toBe(false);
    expect(await store.claimCallback(list.id, 1_600, 500)).toBe(true); // the first holder died
    await store.markCallbackQueued(list.id);
    expect(await store.claimCallback(list.id, 9_000, 500)).toBe(false);
  });
});

describe('redis list store retention', () => {
  it('gives every key an ended list keeps the retention period as its time to live, and deletes its working data', async () => {
    redis ??= createRedis(testRedisUrl(), 'request', 'test-list-store');
    await waitForRedis(redis, 5_000);
    const store = new RedisListStore(redis, prefix);
    const list = listOf('key-r');
    await store.putInput(list.id, 0, [[0, 'a@x.test']]);
    await store.create(list, [[[0, 'a@x.test', 1]]]);
    await store.commit(list.id, {
      now: 10,
      chunk: 0,
      round: 0,
      settled: [{ index: 0, entries: 1, result: result('a@x.test', 'deliverable') }],
      retries: [],
      eventId: 'evt_r',
    });
    await store.finish(list.id, 7 * 86_400_000);
    const keys = await redis.keys(`${prefix}:*${list.id}*`);
    expect(keys.length).toBeGreaterThanOrEqual(3);
    // The working data (addresses to probe, chunks done) has no reader once the list ended: deleted.
    expect(keys.filter((key) => /:(work|retries|chunks|groups)$/.test(key))).toEqual([]);
    for (const key of keys) {
      const ttl = await redis.ttl(key);
      expect(ttl, key).toBeGreaterThan(7 * 86_400 - 60);
      expect(ttl, key).toBeLessThanOrEqual(7 * 86_400);
    }
  });
});
