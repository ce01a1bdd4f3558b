/**
 * The encoder reuses its working arrays between calls and carves symbols' rows out of a shared
 * pool: a symbol must still own what it hands out, whatever is encoded after it.
 */
import { describe, expect, it } from 'vitest';
import { encodeText } from '../src/encoder/index.ts';
import { pooledInt32Array } from '../src/encoder/int32-pool.ts';

describe('symbols own their rows and modules', () => {
  it('a symbol is unchanged by later encodings of every version', () => {
    const texts = Array.from({ length: 36 }, (_, i) => `https://example.com/${'x'.repeat(5 * i)}?n=${i}`);
    const first = texts.map((text) => encodeText(text)!);
    const rows = first.map((symbol) => Array.from(symbol.rows));
    const modules = first.map((symbol) => Array.from(symbol.modules));
    for (const text of texts.reverse()) encodeText(`${text}-again`);
    first.forEach((symbol, i) => {
      expect(Array.from(symbol.rows)).toEqual(rows[i]);
      expect(Array.from(symbol.modules)).toEqual(modules[i]);
    });
    expect(new Set(first.map((symbol) => symbol.version)).size).toBeGreaterThan(5);
  });

  it('pooled arrays are zero-filled and never overlap, across slabs', () => {
    const arrays = Array.from({ length: 200 }, (_, i) => pooledInt32Array(1 + (i % 114)));
    for (const array of arrays) expect(array.every((word) => word === 0)).toBe(true);
    arrays.forEach((array, i) => array.fill(i + 1));
    arrays.forEach((array, i) => expect(array.every((word) => word === i + 1)).toBe(true));
  });
});
