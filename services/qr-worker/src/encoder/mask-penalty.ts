/**
 * Choosing the mask: the penalty rules N1..N4 exactly as node-qrcode scores them (so the same
 * symbol comes out for the same codewords), computed on packed lines 32 modules at a time instead
 * of module by module. Ties go to the lower mask number.
 *
 * N1: each run of 5 + k same-coloured modules in a row or column scores 3 + k.
 * N2: each 2x2 block of one colour scores 3.
 * N3: each dark-light-dark-dark-dark-light-dark pattern with four light modules before or after
 *     it, inside a row or column, scores 40.
 * N4: 10 for every 5 % (rounded up) that the dark share of the symbol is away from 50 %.
 *
 * A mask is scored on the fly (unmasked line XOR mask line), rows first (N1, N2, N3 and N4 in one
 * pass), then columns (N1, N3); every part is non-negative, so a mask is dropped as soon as its
 * running score can no longer beat the best one so far.
 */
import { pooledInt32Array } from './int32-pool.ts';
import { popcount2 } from './popcount.ts';
import { MASK_COUNT, type SymbolTemplate } from './symbol-template.ts';

/** Low word of a two-word line shifted towards bit 0 by `k` (1..31); the high word is just `hi >>> k`. */
const shiftedLow = (lo: number, hi: number, k: number) => (lo >>> k) | (hi << (32 - k));

/** The low `bits` bits of a two-word line: its low and high word. */
const lowMaskLo = (bits: number) => (bits >= 32 ? -1 : (1 << bits) - 1);
const lowMaskHi = (bits: number) => (bits <= 32 ? 0 : (1 << (bits - 32)) - 1);

/** The masks of one symbol size: `valid` covers its modules, `pair` the modules x that have a module x + 1. */
interface LineMasks {
  validLo: number;
  validHi: number;
  pairLo: number;
  pairHi: number;
}

/**
 * N1 and N3 of one line, given its `same` bits (same[x]: module x equals module x + 1).
 *
 * N1: four[x] marks modules x .. x + 4 of one colour, so a run of 5 + k modules has 1 + k such x
 * in a row, from its first module; widened by two towards the run's end they are 3 + k bits, its
 * score, and widened runs never touch (the next run starts after this one's last module). One
 * count of set bits instead of counting the x and, separately, the runs.
 *
 * N3: finder[x] (modules x .. x + 6 read 1011101) is spelt with the `same` bits: dark at x, a
 * change at x and at x + 1, no change at x + 2 and x + 3, a change at x + 4 and x + 5; fewer
 * shifts than testing the seven modules, and most lines stop there.
 */
function lineScore(lo: number, hi: number, sameLo: number, sameHi: number, masks: LineMasks): number {
  const twoLo = sameLo & shiftedLow(sameLo, sameHi, 1);
  const twoHi = sameHi & (sameHi >>> 1);
  const fourLo = twoLo & shiftedLow(twoLo, twoHi, 2);
  const fourHi = twoHi & (twoHi >>> 2);
  const widenedLo = fourLo | (fourLo << 1) | (fourLo << 2);
  const widenedHi = fourHi | (fourHi << 1) | (fourHi << 2) | (fourLo >>> 31) | (fourLo >>> 30);
  const runs = popcount2(widenedLo, widenedHi);

  const changeLo = ~sameLo & masks.pairLo;
  const changeHi = ~sameHi & masks.pairHi;
  const twoChangesLo = changeLo & shiftedLow(changeLo, changeHi, 1);
  const twoChangesHi = changeHi & (changeHi >>> 1);
  const finderLo = lo & twoChangesLo & shiftedLow(twoLo, twoHi, 2) & shiftedLow(twoChangesLo, twoChangesHi, 4);
  const finderHi = hi & twoChangesHi & (twoHi >>> 2) & (twoChangesHi >>> 4);
  if ((finderLo | finderHi) === 0) return runs;
  return runs + 40 * finderLikeCount(lo, hi, finderLo, finderHi, masks);
}

/** Finder patterns (1011101) with four light modules before or after them inside the line. */
function finderLikeCount(lo: number, hi: number, finderLo: number, finderHi: number, masks: LineMasks): number {
  // four[x]: modules x .. x + 3 are light (bits past the line are never light).
  const lightLo = ~lo & masks.validLo;
  const lightHi = ~hi & masks.validHi;
  const lightTwoLo = lightLo & shiftedLow(lightLo, lightHi, 1);
  const lightTwoHi = lightHi & (lightHi >>> 1);
  const fourLo = lightTwoLo & shiftedLow(lightTwoLo, lightTwoHi, 2);
  const fourHi = lightTwoHi & (lightTwoHi >>> 2);
  const beforeLo = fourLo & shiftedLow(finderLo, finderHi, 4);
  const beforeHi = fourHi & (finderHi >>> 4);
  const afterLo = finderLo & shiftedLow(fourLo, fourHi, 7);
  const afterHi = finderHi & (fourHi >>> 7);
  return popcount2(beforeLo, beforeHi) + popcount2(afterLo, afterHi);
}

/**
 * N1, N2 and N3 over the masked rows, plus N4 (which needs every row's dark count); stops once
 * the score reaches `limit`, the returned score then being only a lower bound.
 */
function rowScore(rows: Int32Array, mask: Int32Array, size: number, masks: LineMasks, limit: number): number {
  let score = 0;
  let dark = 0;
  let upperLo = 0;
  let upperHi = 0;
  let upperSameLo = 0;
  let upperSameHi = 0;
  for (let i = 0; i < 2 * size; i += 2) {
    const lo = rows[i]! ^ mask[i]!;
    const hi = rows[i + 1]! ^ mask[i + 1]!;
    const sameLo = ~(lo ^ shiftedLow(lo, hi, 1)) & masks.pairLo;
    const sameHi = ~(hi ^ (hi >>> 1)) & masks.pairHi;
    score += lineScore(lo, hi, sameLo, sameHi, masks);
    // N2: a block at x where this row equals the one above at x and both rows repeat from x to x + 1.
    if (i > 0) score += 3 * popcount2(~(upperLo ^ lo) & upperSameLo & sameLo, ~(upperHi ^ hi) & upperSameHi & sameHi);
    dark += popcount2(lo, hi);
    if (score >= limit) return score;
    upperLo = lo;
    upperHi = hi;
    upperSameLo = sameLo;
    upperSameHi = sameHi;
  }
  // The same floating-point expression as node-qrcode, so rounding cannot differ.
  return score + 10 * Math.abs(Math.ceil((dark * 100) / (size * size) / 5) - 10);
}

/** N1 and N3 over the masked columns, stopping like rowScore. */
function columnScore(columns: Int32Array, mask: Int32Array, size: number, masks: LineMasks, limit: number): number {
  let score = 0;
  for (let i = 0; i < 2 * size; i += 2) {
    const lo = columns[i]! ^ mask[i]!;
    const hi = columns[i + 1]! ^ mask[i + 1]!;
    const sameLo = ~(lo ^ shiftedLow(lo, hi, 1)) & masks.pairLo;
    const sameHi = ~(hi ^ (hi >>> 1)) & masks.pairHi;
    score += lineScore(lo, hi, sameLo, sameHi, masks);
    if (score >= limit) return score;
  }
  return score;
}

/** The full penalty of a mask (no early stop); for tests and comparisons. */
export function penalty(template: SymbolTemplate, rows: Int32Array, columns: Int32Array, mask: number): number {
  const masks = lineMasks(template.size);
  const limit = Number.POSITIVE_INFINITY;
  return (
    rowScore(rows, template.maskRows[mask]!, template.size, masks, limit) +
    columnScore(columns, template.maskColumns[mask]!, template.size, masks, limit)
  );
}

const lineMasks = (size: number): LineMasks => ({
  validLo: lowMaskLo(size),
  validHi: lowMaskHi(size),
  pairLo: lowMaskLo(size - 1),
  pairHi: lowMaskHi(size - 1),
});

/**
 * The mask with the lowest penalty, the lower number on a tie. Masks are tried in order, so a
 * later one wins only with a strictly lower score: it is dropped once its running score reaches
 * the best.
 */
export function bestMask(template: SymbolTemplate, rows: Int32Array, columns: Int32Array): number {
  const { size } = template;
  const masks = lineMasks(size);
  let best = 0;
  let lowest = Number.POSITIVE_INFINITY;
  for (let mask = 0; mask < MASK_COUNT; mask += 1) {
    const across = rowScore(rows, template.maskRows[mask]!, size, masks, lowest);
    if (across >= lowest) continue;
    const score = across + columnScore(columns, template.maskColumns[mask]!, size, masks, lowest - across);
    if (score < lowest) {
      lowest = score;
      best = mask;
    }
  }
  return best;
}

/** The symbol's rows under `mask`, in an array of their own. */
export function maskedRows(template: SymbolTemplate, rows: Int32Array, mask: number): Int32Array {
  const maskRows = template.maskRows[mask]!;
  const result = pooledInt32Array(rows.length);
  for (let i = 0; i < rows.length; i += 1) result[i] = rows[i]! ^ maskRows[i]!;
  return result;
}
