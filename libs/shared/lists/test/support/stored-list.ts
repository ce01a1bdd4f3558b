/**
 * A list written to the Redis list store as the product writes it, and its bytes at rest: shared
 * by the store's size test (store-bytes.test.ts, 5,000 rows under the contract's bound) and
 * `npm run bench:list-bytes` (100,000 rows, per stage), so that both measure the same writes.
 */
import { randomBytes } from 'node:crypto';
import type { VerifyResult } from '@svc/contracts';
import type { Redis } from '@svc/jobs/redis';
import { ListBuilder } from '../../src/list-builder.ts';
import type { WorkItem } from '../../src/model.ts';
import type { RedisListStore } from '../../src/redis-store.ts';
import { newList } from './new-list.ts';

export interface StoredList {
  id: string;
  /** What the builder counted: rows, and distinct addresses. */
  count: number;
  distinct: number;
  /** The work chunks as created. */
  work: WorkItem[][];
}

/**
 * `rows` rows staged through a ListBuilder, the list created with its work chunks, then every
 * distinct address settled with `resultOf` (chunk by chunk, as the processor commits).
 * `onCreated` runs between the creation and the first commit (a stage to measure).
 */
export async function writeList(
  store: RedisListStore,
  rows: number,
  row: (i: number) => string[],
  resultOf: (email: string, i: number) => VerifyResult,
  onCreated?: (id: string) => Promise<void>,
): Promise<StoredList> {
  const id = `lst_${randomBytes(12).toString('hex')}`;
  const builder = new ListBuilder(store, id, 0);
  for (let i = 0; i < rows; i += 1) await builder.add(row(i));
  await builder.flush();
  const work = builder.work();
  await store.create(
    newList({
      id,
      keyId: 'key-bytes',
      count: builder.count,
      distinct: builder.distinct,
      inputChunks: builder.inputChunks,
      workChunks: work.length,
      createdAt: Date.now(),
    }),
    work,
  );
  await onCreated?.(id);
  for (const [chunk, items] of work.entries())
    await store.commit(id, {
      now: Date.now(),
      chunk,
      round: 0,
      settled: items.map(([index, email, entries]) => ({ index, entries, result: resultOf(email, index) })),
      retries: [],
      eventId: `evt_${chunk}`,
    });
  return { id, count: builder.count, distinct: builder.distinct, work };
}

/** The list's bytes in Redis: MEMORY USAGE summed over every key of the list (`<prefix>:list:{<id>}*`). */
export async function listBytes(redis: Redis, prefix: string, id: string): Promise<number> {
  let total = 0;
  for (const key of await redis.keys(`${prefix}:list:{${id}}*`)) total += Number(await redis.memory('USAGE', key, 'SAMPLES', '0'));
  return total;
}
