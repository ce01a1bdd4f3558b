import { describe, expect, it } from 'vitest';
import { RecentIds } from '../src/recent-ids.ts';

describe('recent ids', () => {
  it('keeps the newest `capacity` ids, dropping the oldest first', () => {
    const ids = new RecentIds<number>(3, 1_000);
    for (let i = 1; i <= 5; i += 1) ids.set(`id${i}`, i, 0);
    expect(['id1', 'id2', 'id3', 'id4', 'id5'].map((id) => ids.get(id, 0))).toEqual([undefined, undefined, 3, 4, 5]);
  });

  it('forgets ids older than its time to live', () => {
    const ids = new RecentIds<string>(10, 1_000);
    ids.set('old', 'a', 0);
    ids.set('young', 'b', 500);
    expect(ids.get('old', 999)).toBe('a');
    expect(ids.get('old', 1_000)).toBeUndefined();
    expect(ids.get('young', 1_000)).toBe('b');
    expect(ids.get('young', 1_500)).toBeUndefined();
  });

  it('an id set again lives from its newest set: its older place leaving the ring does not take it along', () => {
    const ids = new RecentIds<string>(3, 1_000);
    ids.set('a', 'first', 0);
    ids.set('b', 'x', 0);
    ids.set('a', 'again', 600);
    // a's first place is the oldest; pushing it out leaves a, set again since.
    ids.set('c', 'y', 600);
    expect(ids.get('a', 600)).toBe('again');
    expect(ids.get('b', 600)).toBe('x');
    // Its first set's age does not count either.
    expect(ids.get('a', 1_500)).toBe('again');
    expect(ids.get('a', 1_600)).toBeUndefined();
  });

  it('stays bounded over many sets', () => {
    const ids = new RecentIds<number>(100, 60_000);
    for (let i = 0; i < 10_000; i += 1) ids.set(`id${i}`, i, i);
    let known = 0;
    for (let i = 0; i < 10_000; i += 1) if (ids.get(`id${i}`, 10_000) !== undefined) known += 1;
    expect(known).toBe(100);
    expect(ids.get('id9999', 10_000)).toBe(9_999);
  });
});
