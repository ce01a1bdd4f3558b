import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { Redis } from 'ioredis';

/** The Redis every test file shares (found once by the global setup). */
export const testRedisUrl = (): string => inject('redisUrl');

/** A key prefix of the file's own, so files running in parallel never see each other's keys. */
export const uniquePrefix = (label: string): string => `test-${label}-${randomBytes(4).toString('hex')}`;

/** Deletes every key under a prefix (after a file's tests). */
export async function dropPrefix(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1_000);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
