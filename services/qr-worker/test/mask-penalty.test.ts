/**
 * The word-at-a-time penalty says exactly what node-qrcode's module-by-module rules say, for every
 * mask of random symbols of every version, and the mask chosen with early stopping is the first
 * one of lowest penalty.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dataCodewordCount, blockStructure } from '../src/encoder/level-m-tables.ts';
import { bestMask, penalty } from '../src/encoder/mask-penalty.ts';
import { MASK_COUNT, placeCodewords, symbolTemplate, type SymbolTemplate } from '../src/encoder/symbol-template.ts';

/** node-qrcode's getPenaltyN1..N4 (lib/core/mask-pattern.js), on a row-major 0/1 grid. */
function plainPenalty(size: number, dark: (row: number, column: number) => number): number {
  let points = 0;
  for (const get of [dark, (row: number, column: number) => dark(column, row)]) {
    for (let row = 0; row < size; row += 1) {
      let same = 0;
      let last = -1;
      let window = 0;
      for (let column = 0; column < size; column += 1) {
        const module = get(row, column);
        if (module === last) same += 1;
        else {
          if (same >= 5) points += 3 + (same - 5);
          last = module;
          same = 1;
        }
        window = ((window << 1) & 0x7ff) | module;
        if (column >= 10 && (window === 0x5d0 || window === 0x05d)) points += 40;
      }
      if (same >= 5) points += 3 + (same - 5);
    }
  }
  let darkCount = 0;
  for (let row = 0; row < size; row += 1) {
    for (let column = 0; column < size; column += 1) {
      darkCount += dark(row, column);
      if (row === size - 1 || column === size - 1) continue;
      const last = dark(row, column) + dark(row, column + 1) + dark(row + 1, column) + dark(row + 1, column + 1);
      if (last === 4 || last === 0) points += 3;
    }
  }
  return points + 10 * Math.abs(Math.ceil((darkCount * 100) / (size * size) / 5) - 10);
}

const bit = (words: Int32Array, line: number, index: number) => (words[2 * line + (index >>> 5)]! >>> (index & 31)) & 1;

function maskedModule(template: SymbolTemplate, rows: Int32Array, mask: number) {
  return (row: number, column: number) => bit(rows, row, column) ^ bit(template.maskRows[mask]!, row, column);
}

const symbols = fc.integer({ min: 1, max: 10 }).chain((version) => {
  const total = dataCodewordCount(version) + blockStructure(version).eccPerBlock * blockStructure(version).dataPerBlock.length;
  return fc.tuple(fc.constant(version), fc.uint8Array({ minLength: total, maxLength: total }));
});

describe('mask penalty', () => {
  it('equals node-qrcode N1 + N2 + N3 + N4 for every mask; the chosen mask is the first lowest', () => {
    fc.assert(
      fc.property(symbols, ([version, codewords]) => {
        const template = symbolTemplate(version);
        const { rows, columns } = placeCodewords(template, codewords);
        const scores = Array.from({ length: MASK_COUNT }, (_, mask) => penalty(template, rows, columns, mask));
        for (let mask = 0; mask < MASK_COUNT; mask += 1)
          expect(scores[mask]).toBe(plainPenalty(template.size, maskedModule(template, rows, mask)));
        expect(bestMask(template, rows, columns)).toBe(scores.indexOf(Math.min(...scores)));
      }),
      { numRuns: 200 },
    );
  });
});
