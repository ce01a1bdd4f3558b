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
 */
import { MASK_COUNT, type SymbolTemplate } from './symbol-template.ts';

function popcount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Low word of a two-word line shifted towards bit 0 by `k` (1..31); the high word is just `hi >>> k`. */
const shiftedLow = (lo: number, hi: number, k: number) => (lo >>> k) | (hi << (32 - k));

/** A mask of the low `bits` bits as a (lo, hi) pair. */
const lowMask = (bits: number): [number, number] => [bits >= 32 ? -1 : (1 << bits) - 1, bits <= 32 ? 0 : (1 << (bits - 32)) - 1];

/** N1 (without the weight split) and the N3 pattern count over `size` lines of `size` modules. */
function runAndFinderScores(lines: Int32Array, size: number): { runs: number; finderLike: number } {
  const [validLo, validHi] = lowMask(size);
  const [pairLo, pairHi] = lowMask(size - 1);
  let runs = 0;
  let finderLike = 0;
  for (let i = 0; i < 2 * size; i += 2) {
    const lo = lines[i]!;
    const hi = lines[i + 1]!;
    // same[x]: module x equals module x + 1.
    const sameLo = ~(lo ^ shiftedLow(lo, hi, 1)) & pairLo;
    const sameHi = ~(hi ^ (hi >>> 1)) & pairHi;
    // five[x]: modules x .. x + 4 are one colour; a run of 5 + k has 1 + k such x and scores 3 + k.
    const twoLo = sameLo & shiftedLow(sameLo, sameHi, 1);
    const twoHi = sameHi & (sameHi >>> 1);
    const fiveLo = twoLo & shiftedLow(twoLo, twoHi, 2);
    const fiveHi = twoHi & (twoHi >>> 2);
    const runStartLo = fiveLo & ~(fiveLo << 1);
    const runStartHi = fiveHi & ~((fiveHi << 1) | (fiveLo >>> 31));
    runs += popcount(fiveLo) + popcount(fiveHi) + 2 * (popcount(runStartLo) + popcount(runStartHi));

    // finder[x]: modules x .. x + 6 read dark-light-dark-dark-dark-light-dark.
    const lightLo = ~lo & validLo;
    const lightHi = ~hi & validHi;
    const finderLo =
      lo &
      shiftedLow(lightLo, lightHi, 1) &
      shiftedLow(lo, hi, 2) &
      shiftedLow(lo, hi, 3) &
      shiftedLow(lo, hi, 4) &
      shiftedLow(lightLo, lightHi, 5) &
      shiftedLow(lo, hi, 6);
    const finderHi = hi & (lightHi >>> 1) & (hi >>> 2) & (hi >>> 3) & (hi >>> 4) & (lightHi >>> 5) & (hi >>> 6);
    if ((finderLo | finderHi) === 0) continue;
    // four[x]: modules x .. x + 3 are light (bits past the line are never light).
    const lightTwoLo = lightLo & shiftedLow(lightLo, lightHi, 1);
    const lightTwoHi = lightHi & (lightHi >>> 1);
    const fourLo = lightTwoLo & shiftedLow(lightTwoLo, lightTwoHi, 2);
    const fourHi = lightTwoHi & (lightTwoHi >>> 2);
    const beforeLo = fourLo & shiftedLow(finderLo, finderHi, 4);
    const beforeHi = fourHi & (finderHi >>> 4);
    const afterLo = finderLo & shiftedLow(fourLo, fourHi, 7);
    const afterHi = finderHi & (fourHi >>> 7);
    finderLike += popcount(beforeLo) + popcount(beforeHi) + popcount(afterLo) + popcount(afterHi);
  }
  return { runs, finderLike };
}

/** N2's block count and N4's dark module count, from the rows. */
function blockAndDarkCounts(rows: Int32Array, size: number): { blocks: number; dark: number } {
  const [pairLo, pairHi] = lowMask(size - 1);
  let blocks = 0;
  let dark = popcount(rows[0]!) + popcount(rows[1]!);
  for (let i = 2; i < 2 * size; i += 2) {
    const upperLo = rows[i - 2]!;
    const upperHi = rows[i - 1]!;
    const lo = rows[i]!;
    const hi = rows[i + 1]!;
    dark += popcount(lo) + popcount(hi);
    // Block at x: both rows equal at x, and each row equal at x and x + 1.
    const blockLo = ~(upperLo ^ lo) & ~(upperLo ^ shiftedLow(upperLo, upperHi, 1)) & ~(lo ^ shiftedLow(lo, hi, 1)) & pairLo;
    const blockHi = ~(upperHi ^ hi) & ~(upperHi ^ (upperHi >>> 1)) & ~(hi ^ (hi >>> 1)) & pairHi;
    blocks += popcount(blockLo) + popcount(blockHi);
  }
  return { blocks, dark };
}

export function penalty(rows: Int32Array, columns: Int32Array, size: number): number {
  const across = runAndFinderScores(rows, size);
  const down = runAndFinderScores(columns, size);
  const { blocks, dark } = blockAndDarkCounts(rows, size);
  const modules = size * size;
  // The same floating-point expression as node-qrcode, so rounding cannot differ.
  const balance = Math.abs(Math.ceil((dark * 100) / modules / 5) - 10);
  return across.runs + down.runs + 3 * blocks + 40 * (across.finderLike + down.finderLike) + 10 * balance;
}

/** The mask with the lowest penalty, and the masked symbol as packed rows. */
export function applyBestMask(template: SymbolTemplate, rows: Int32Array, columns: Int32Array): { mask: number; rows: Int32Array } {
  const { size } = template;
  const maskedRows = new Int32Array(rows.length);
  const maskedColumns = new Int32Array(columns.length);
  let best = 0;
  let lowest = Number.POSITIVE_INFINITY;
  for (let mask = 0; mask < MASK_COUNT; mask += 1) {
    const maskRows = template.maskRows[mask]!;
    const maskColumns = template.maskColumns[mask]!;
    for (let i = 0; i < rows.length; i += 1) {
      maskedRows[i] = rows[i]! ^ maskRows[i]!;
      maskedColumns[i] = columns[i]! ^ maskColumns[i]!;
    }
    const score = penalty(maskedRows, maskedColumns, size);
    if (score < lowest) {
      lowest = score;
      best = mask;
    }
  }
  const maskRows = template.maskRows[best]!;
  for (let i = 0; i < rows.length; i += 1) maskedRows[i] = rows[i]! ^ maskRows[i]!;
  return { mask: best, rows: maskedRows };
}
