/** The word-at-a-time Reed-Solomon division and direct interleaving against the textbook byte-at-a-time ones. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { interleavedCodewords } from '../src/encoder/codewords.ts';
import { blockStructure, dataCodewordCount } from '../src/encoder/level-m-tables.ts';

/** GF(256) product with the QR polynomial, bit by bit. */
function multiply(a: number, b: number): number {
  let product = 0;
  for (let bit = 7; bit >= 0; bit -= 1) {
    product = (product << 1) ^ ((product >>> 7) * 0x11d);
    if (((b >>> bit) & 1) === 1) product ^= a;
  }
  return product;
}

/** The remainder of data(x) * x^degree divided by the generator with roots 2^0 .. 2^(degree-1). */
function plainErrorCorrection(data: readonly number[], degree: number): number[] {
  let generator = [1];
  for (let root = 0, power = 1; root < degree; root += 1, power = multiply(power, 2)) {
    const next = new Array<number>(generator.length + 1).fill(0);
    generator.forEach((coefficient, i) => {
      next[i]! ^= coefficient;
      next[i + 1]! ^= multiply(coefficient, power);
    });
    generator = next;
  }
  const remainder = [...data, ...new Array<number>(degree).fill(0)];
  for (let i = 0; i < data.length; i += 1) {
    const factor = remainder[i]!;
    for (let j = 0; j < generator.length; j += 1) remainder[i + j]! ^= multiply(generator[j]!, factor);
  }
  return remainder.slice(data.length);
}

function plainInterleaved(data: Uint8Array, version: number): number[] {
  const { eccPerBlock, dataPerBlock } = blockStructure(version);
  const blocks: number[][] = [];
  for (let block = 0, start = 0; block < dataPerBlock.length; start += dataPerBlock[block]!, block += 1)
    blocks.push(Array.from(data.subarray(start, start + dataPerBlock[block]!)));
  const ecc = blocks.map((block) => plainErrorCorrection(block, eccPerBlock));
  const result: number[] = [];
  for (let i = 0; i < Math.max(...dataPerBlock); i += 1) for (const block of blocks) if (i < block.length) result.push(block[i]!);
  for (let i = 0; i < eccPerBlock; i += 1) for (const block of ecc) result.push(block[i]!);
  return result;
}

describe('Reed-Solomon', () => {
  it('interleaved data and error correction match the byte-at-a-time division for versions 1..10', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }).chain((version) => {
          const length = dataCodewordCount(version);
          return fc.tuple(fc.constant(version), fc.uint8Array({ minLength: length, maxLength: length }));
        }),
        ([version, data]) => {
          expect(Array.from(interleavedCodewords(data, version))).toEqual(plainInterleaved(data, version));
        },
      ),
      { numRuns: 300 },
    );
  });
});
