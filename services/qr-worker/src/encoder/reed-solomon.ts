/**
 * Reed-Solomon error-correction codewords over GF(256) with the QR polynomial
 * x^8 + x^4 + x^3 + x^2 + 1, generator roots a^0 .. a^(degree-1).
 *
 * The division runs four remainder bytes per 32-bit word: per data byte, the remainder shifts one
 * byte and takes the generator times that byte's factor from a table (256 factors x the words of
 * one degree), a quarter of the byte-at-a-time table look-ups and XORs.
 */
const EXP = new Uint8Array(512);
const LOG = new Uint8Array(256);
{
  let value = 1;
  for (let power = 0; power < 255; power += 1) {
    EXP[power] = value;
    LOG[value] = power;
    value <<= 1;
    if (value & 0x100) value ^= 0x11d;
  }
  // Doubled so that a sum of two logarithms indexes it without a modulo.
  for (let power = 255; power < 512; power += 1) EXP[power] = EXP[power - 255]!;
}

function multiply(a: number, b: number): number {
  return a === 0 || b === 0 ? 0 : EXP[LOG[a]! + LOG[b]!]!;
}

/** Coefficients after the leading 1, highest degree first. */
function generator(degree: number): number[] {
  let polynomial = [1];
  for (let root = 0; root < degree; root += 1) {
    const next = new Array<number>(polynomial.length + 1).fill(0);
    for (let i = 0; i < polynomial.length; i += 1) {
      next[i]! ^= polynomial[i]!;
      next[i + 1]! ^= multiply(polynomial[i]!, EXP[root]!);
    }
    polynomial = next;
  }
  return polynomial.slice(1);
}

const wordsOf = (degree: number) => (degree + 3) >>> 2;

/**
 * Row `factor` holds the generator times `factor`, coefficient j in byte 3 - j % 4 (the top byte
 * first) of word j / 4; the bytes past the degree stay zero, so the remainder's padding does too.
 */
function factorTable(degree: number): Int32Array {
  const coefficients = generator(degree);
  const words = wordsOf(degree);
  const table = new Int32Array(256 * words);
  for (let factor = 1; factor < 256; factor += 1) {
    for (let j = 0; j < degree; j += 1) table[factor * words + (j >>> 2)]! |= multiply(coefficients[j]!, factor) << (24 - 8 * (j & 3));
  }
  return table;
}

const tables = new Map<number, Int32Array>();
/** The running remainder, at most seven words (degree 26 is the largest at level M up to version 10). */
const remainder = new Int32Array(8);

/**
 * Writes the `degree` error-correction codewords of `data[start, end)` into `out`, the first at
 * `at` and each next one `stride` further on (so blocks can be written interleaved).
 */
export function writeErrorCorrection(
  data: Uint8Array,
  start: number,
  end: number,
  degree: number,
  out: Uint8Array,
  at: number,
  stride: number,
): void {
  let table = tables.get(degree);
  if (table === undefined) {
    table = factorTable(degree);
    tables.set(degree, table);
  }
  const words = wordsOf(degree);
  const last = words - 1;
  remainder.fill(0);
  for (let i = start; i < end; i += 1) {
    const row = (data[i]! ^ (remainder[0]! >>> 24)) * words;
    for (let k = 0; k < last; k += 1) remainder[k] = ((remainder[k]! << 8) | (remainder[k + 1]! >>> 24)) ^ table[row + k]!;
    remainder[last] = (remainder[last]! << 8) ^ table[row + last]!;
  }
  for (let j = 0; j < degree; j += 1) out[at + j * stride] = remainder[j >>> 2]! >>> (24 - 8 * (j & 3));
}
