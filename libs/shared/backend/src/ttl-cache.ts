/**
 * The store behind the outcome cache (what it holds and under which key: cached-outcome.ts), so
 * that a repeated address costs no probe. In memory in embedded mode, in Redis in distributed
 * mode (shared by every verify-worker). Redis values are written by the codec given (JSON when
 * none) and re-validated on read.
 */
import { LRUCache } from 'lru-cache';
import type { Redis } from '@svc/jobs/redis';
import type { z } from 'zod';
import type { StateStore } from './backend.ts';

export interface TtlCache<T> {
  get(key: string): Promise<T | undefined>;
  set(key: string, value: T, ttlSeconds: number): Promise<void>;
}

/**
 * The most recently used `maxEntries` outcomes, each until its own time to live. lru-cache, not a
 * Map that drops its first entry when full: a Map walks the places of the entries deleted from its
 * front until it is rebuilt, so a full 100,000-entry Map spent about 39 us on each new entry (a
 * loop of delete-the-first and set, this machine), 3.9 s of CPU over a list of 100,000 new addresses.
 */
export class MemoryTtlCache<T> implements TtlCache<T> {
  private readonly entries: LRUCache<string, { value: T }>;

  constructor(maxEntries = 100_000, now: () => number = Date.now) {
    // ttlResolution 0: every read asks `now` (lru-cache would otherwise reuse one reading for 1 ms).
    // A bound on the total size (each entry 1), not `max`: given `max`, lru-cache allocates all its
    // places at once, 15 ms and megabytes for 100,000 before the first entry (each backend and each
    // verify handler makes two such caches); this way it grows with use, at about 0.3 us more per set
    // (300,000 sets: 418 ms against 332 ms, this machine).
    this.entries = new LRUCache({ maxSize: maxEntries, sizeCalculation: () => 1, ttlResolution: 0, perf: { now } });
  }

  get(key: string): Promise<T | undefined> {
    return Promise.resolve(this.entries.get(key)?.value);
  }

  set(key: string, value: T, ttlSeconds: number): Promise<void> {
    if (ttlSeconds > 0) this.entries.set(key, { value }, { ttl: ttlSeconds * 1_000 });
    return Promise.resolve();
  }
}

/** How values are written to Redis and read back (decode validates: undefined for what is not one). */
export interface ValueCodec<T> {
  encode(value: T): string;
  decode(raw: string): T | undefined;
}

/** JSON checked against `schema`. */
export function jsonCodec<T>(schema: z.ZodType<T>): ValueCodec<T> {
  return {
    encode: (value) => JSON.stringify(value),
    decode: (raw) => {
      try {
        const parsed = schema.safeParse(JSON.parse(raw));
        return parsed.success ? parsed.data : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

export class RedisTtlCache<T> implements TtlCache<T> {
  constructor(
    private readonly redis: Redis,
    private readonly namespace: string,
    private readonly codec: ValueCodec<T>,
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
    return raw === null ? undefined : this.codec.decode(raw);
  }

  async set(key: string, value: T, ttlSeconds: number): Promise<void> {
    if (ttlSeconds <= 0) return;
    await this.redis.set(this.nameOf(key), this.codec.encode(value), 'EX', ttlSeconds).catch(() => undefined);
  }
}

/**
 * The TTL cache of a state store, the one place its kind is chosen: in memory (at most
 * `memoryEntries`, its entries aged by `now`), or in Redis under `<prefix>:<name>` (aged by Redis).
 */
export function ttlCacheIn<T>(
  state: StateStore,
  name: string,
  codec: ValueCodec<T>,
  memoryEntries?: number,
  now?: () => number,
): TtlCache<T> {
  return state.kind === 'memory'
    ? new MemoryTtlCache<T>(memoryEntries, now)
    : new RedisTtlCache(state.redis, `${state.prefix}:${name}`, codec);
}
