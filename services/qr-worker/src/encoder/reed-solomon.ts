/**
 * Reed-Solomon error-correction codewords over GF(256) with the QR polynomial
 * x^8 + x^4 + x^3 + x^2 + 1, generator roots a^0 .. a^(degree-1).
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

/** Coefficients after the leading 1, highest degree first, as logarithms (all are non-zero). */
function generatorLogs(degree: number): Uint8Array {
  let polynomial = [1];
  for (let root = 0; root < degree; root += 1) {
    const next = new Array<number>(polynomial.length + 1).fill(0);
    for (let i = 0; i < polynomial.length; i += 1) {
      next[i]! ^= polynomial[i]!;
      next[i + 1]! ^= multiply(polynomial[i]!, EXP[root]!);
    }
    polynomial = next;
  }
  return Uint8Array.from(polynomial.slice(1), (coefficient) => LOG[coefficient]!);
}

const generators = new Map<number, Uint8Array>();

/** Writes the `degree` error-correction codewords of `data` into `out` at `outOffset`. */
export function writeErrorCorrection(data: Uint8Array, degree: number, out: Uint8Array, outOffset: number): void {
  let generator = generators.get(degree);
  if (generator === undefined) {
    generator = generatorLogs(degree);
    generators.set(degree, generator);
  }
  // Polynomial long division; `out` holds the running remainder, highest degree first.
  const end = outOffset + degree - 1;
  out.fill(0, outOffset, end + 1);
  for (let i = 0; i < data.length; i += 1) {
    const factor = data[i]! ^ out[outOffset]!;
    if (factor === 0) {
      for (let j = outOffset; j < end; j += 1) out[j] = out[j + 1]!;
      out[end] = 0;
      continue;
    }
    const factorLog = LOG[factor]!;
    for (let j = 0; j < degree - 1; j += 1) out[outOffset + j] = out[outOffset + j + 1]! ^ EXP[generator[j]! + factorLog]!;
    out[end] = EXP[generator[degree - 1]! + factorLog]!;
  }
}
