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
import { listBytes, writeList } from '../libs/shared/lists/test/support/stored-list.ts';
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

const bytesOf = (listId: string): Promise<number> => listBytes(redis, prefix, listId);

async function measure(label: string, row: (i: number) => string[]): Promise<Record<string, string>> {
  let queued = 0;
  const list = await writeList(store, ROWS, row, resultOf, async (id) => {
    queued = await bytesOf(id);
  });
  const { id } = list;
  const settled = await bytesOf(id);
  await store.finish(id, 86_400_000);
  const finished = await bytesOf(id);
  const perRow = (bytes: number) => (bytes / ROWS).toFixed(1);
  return {
    list: label,
    distinct: String(list.distinct),
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
