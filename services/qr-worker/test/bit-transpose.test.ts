/** The block transpose against reading the bits one by one. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { transposeLines } from '../src/encoder/bit-transpose.ts';

const bit = (lines: Int32Array, line: number, index: number) => (lines[2 * line + (index >>> 5)]! >>> (index & 31)) & 1;

describe('transposeLines', () => {
  it('column x bit y is row y bit x, for every symbol size', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }).chain((version) => {
          const size = 17 + 4 * version;
          // Only the modules of the symbol set: nothing past `size` in either word.
          return fc
            .array(fc.tuple(fc.integer(), fc.integer()), { minLength: size, maxLength: size })
            .map((words) => ({ size, rows: Int32Array.from(words.flatMap(([lo, hi]) => [lo & lowBits(size), hi & lowBits(size - 32)])) }));
        }),
        ({ size, rows }) => {
          const expected = new Int32Array(2 * size);
          for (let y = 0; y < size; y += 1) for (let x = 0; x < size; x += 1) expected[2 * x + (y >>> 5)]! |= bit(rows, y, x) << (y & 31);
          expect(transposeLines(rows, size)).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });
});

function lowBits(bits: number): number {
  if (bits <= 0) return 0;
  return bits >= 32 ? -1 : (1 << bits) - 1;
}
