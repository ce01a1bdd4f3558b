/**
 * The store behind the outcome cache (what it holds and under which key: cached-outcome.ts), so
 * that a repeated address costs no probe. In memory in embedded mode, in Redis in distributed
 * mode (shared by every verify-worker). Redis values are JSON and re-validated on read.
 */
import type { Redis } from '@svc/jobs/redis';
import type { z } from 'zod';

export interface TtlCache<T> {
  get(key: string): Promise<T | undefined>;
  set(key: string, value: T, ttlSeconds: number): Promise<void>;
}

export class MemoryTtlCache<T> implements TtlCache<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();

  constructor(
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): Promise<T | undefined> {
    const entry = this.entries.get(key);
    if (entry !== undefined && entry.expiresAt <= this.now()) this.entries.delete(key);
    return Promise.resolve(entry !== undefined && entry.expiresAt > this.now() ? entry.value : undefined);
  }

  set(key: string, value: T, ttlSeconds: number): Promise<void> {
    if (ttlSeconds > 0) {
      // Maps iterate in insertion order: dropping the first entry drops the oldest.
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(key, { value, expiresAt: this.now() + ttlSeconds * 1_000 });
    }
    return Promise.resolve();
  }
}

export class RedisTtlCache<T> implements TtlCache<T> {
  constructor(
    private readonly redis: Redis,
    private readonly namespace: string,
    private readonly schema: z.ZodType<T>,
  ) {}

  /**
   * `<namespace>:{<key>}`: hash-tagged by the entry's own key (a digest), as every name the product
   * writes, so that on a Redis Cluster entries spread over the slots by themselves.
   */
  private nameOf(key: string): string {
    return `${this.namespace}:{${key}}`;
  }

  async get(key: string): Promise<T | undefined> {
    // A cache that cannot be read is a miss, never a failed batch.
    const raw = await this.redis.get(this.nameOf(key)).catch(() => null);
    if (raw === null) return undefined;
    const parsed = this.schema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  }

  async set(key: string, value: T, ttlSeconds: number): Promise<void> {
    if (ttlSeconds <= 0) return;
    await this.redis.set(this.nameOf(key), JSON.stringify(value), 'EX', ttlSeconds).catch(() => undefined);
  }
}
