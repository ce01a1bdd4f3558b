/**
 * `npm run bench:list-bytes`: Redis bytes per stored row of the list store, for 100,000-row lists:
 * distinct addresses on 500 domains (as a CRM export), distinct addresses each on a domain of its
 * own (the worst case: no two results alike), a single address repeated, and a 150-byte CSV row
 * repeated (the fair-share issue's free attack). Each list goes through the store as the product writes it:
 * staged input (ListBuilder), created with its work chunks, every distinct address settled with
 * a typical result, finished. Reported per stage: the sum of MEMORY USAGE over the list's keys,
 * and per row. On REDIS_URL (else the local Redis), under a fresh prefix deleted afterwards.
 */
import { randomBytes } from 'node:crypto';
import type { VerifyResult } from '@svc/contracts';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { RedisListStore } from '@svc/lists/redis';
import { ListBuilder } from '../libs/shared/lists/src/list-builder.ts';
import { findRedis } from '@svc/testkit';
import { printTable } from './processes.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const prefix = `bench-bytes-${randomBytes(3).toString('hex')}`;

const resultOf = (email: string, i: number): VerifyResult => ({
  email,
  score: i % 3 === 0 ? 10 : 95,
  verdict: i % 3 === 0 ? 'undeliverable' : 'deliverable',
  reason: i % 3 === 0 ? 'rejected_email' : 'accepted_email',
  checks: {
    syntax: true,
    domainExists: true,
    mx: [`mx1.${email.slice(email.indexOf('@') + 1)}`, `mx2.${email.slice(email.indexOf('@') + 1)}`],
    smtp: i % 3 === 0 ? 'rejected' : 'accepted',
    catchAll: false,
    disposable: false,
    role: false,
    free: false,
    provider: null,
  },
});

const redisUrl = process.env.REDIS_URL ?? (await findRedis()).url;
const redis = createRedis(redisUrl, 'request', 'bench-list-bytes');
await waitForRedis(redis, 5_000);
const store = new RedisListStore(redis, prefix);

async function bytesOf(listId: string): Promise<number> {
  let total = 0;
  for (const key of await redis.keys(`${prefix}:list:{${listId}}*`)) total += Number(await redis.memory('USAGE', key, 'SAMPLES', '0'));
  return total;
}

async function measure(label: string, row: (i: number) => string[]): Promise<Record<string, string>> {
  const id = `lst_${randomBytes(13).toString('hex')}`;
  const builder = new ListBuilder(store, id, 0);
  for (let i = 0; i < ROWS; i += 1) await builder.add(row(i));
  await builder.flush();
  const work = builder.work();
  await store.create(
    {
      id,
      keyId: 'bench-key',
      name: null,
      count: builder.count,
      distinct: builder.distinct,
      inputChunks: builder.inputChunks,
      workChunks: work.length,
      createdAt: Date.now(),
      callbackUrl: null,
      allowance: 0,
      layout: { columns: ['email'], addressColumn: 0, delimiter: ',', bom: false },
    },
    work,
  );
  const queued = await bytesOf(id);
  for (const [chunk, items] of work.entries()) {
    await store.commit(id, {
      now: Date.now(),
      chunk,
      round: 0,
      settled: items.map(([index, email, entries]) => ({ index, entries, result: resultOf(email, index) })),
      retries: [],
      eventId: `evt_${chunk}`,
    });
  }
  const settled = await bytesOf(id);
  await store.finish(id, 86_400_000);
  const finished = await bytesOf(id);
  const perRow = (bytes: number) => (bytes / ROWS).toFixed(1);
  return {
    list: label,
    distinct: String(builder.distinct),
    'B/row queued': perRow(queued),
    'B/row settled': perRow(settled),
    'B/row finished': perRow(finished),
    'MiB finished': (finished / 2 ** 20).toFixed(2),
  };
}

try {
  const rows = [
    await measure(`${ROWS} distinct, 500 domains`, (i) => [`user${i}@domain${i % 500}.example`]),
    await measure(`${ROWS} distinct, as many domains`, (i) => [`user${i}@domain${i}.example`]),
    await measure(`${ROWS} x one address`, () => ['same.person@example.com']),
    await measure(`${ROWS} x one 150-byte CSV row`, () => [
      'same.person@example.com',
      'Jane',
      'Doe',
      'Example Corporation International Ltd',
      '+44 20 7946 0000',
      '1 Long Street, Some Town, Some County, AB1 2CD, United Kingdom',
    ]),
  ];
  printTable(rows);
} finally {
  for (const key of await redis.keys(`${prefix}:*`)) await redis.del(key);
  redis.disconnect();
}
