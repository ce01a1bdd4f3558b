import { describe, expect, it } from 'vitest';
import { MemoryTtlCache } from '../src/ttl-cache.ts';

describe('memory TTL cache', () => {
  it('keeps each entry for its own time to live', async () => {
    let now = 10_000;
    const cache = new MemoryTtlCache<string>(10, () => now);
    await cache.set('short', 'a', 1);
    await cache.set('long', 'b', 60);
    await cache.set('never', 'c', 0);
    now += 999;
    expect(await cache.get('short')).toBe('a');
    now += 2;
    expect(await cache.get('short')).toBeUndefined();
    expect(await cache.get('long')).toBe('b');
    expect(await cache.get('never')).toBeUndefined();
  });

  it('holds at most its size, letting the least recently used go first', async () => {
    const cache = new MemoryTtlCache<number>(3);
    for (const key of ['a', 'b', 'c']) await cache.set(key, 1, 60);
    expect(await cache.get('a')).toBe(1);
    await cache.set('d', 1, 60);
    expect(await Promise.all(['a', 'b', 'c', 'd'].map((key) => cache.get(key)))).toEqual([1, undefined, 1, 1]);
  });
});
