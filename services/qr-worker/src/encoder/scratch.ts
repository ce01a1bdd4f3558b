import { dataCodewordCount, symbolSize, totalCodewordCount } from './level-m-tables.ts';
import type { PackedLines } from './symbol-template.ts';

/**
 * Per version, the arrays an encoding fills on its way and drops at the end, kept for the next one:
 * encoding is synchronous and nothing of them outlives it (the symbol gets rows of its own), and a
 * typed array of its own per call cost more than filling it (see int32-pool.ts).
 */
export interface Scratch {
  data: Uint8Array;
  codewords: Uint8Array;
  unmasked: PackedLines;
}
const scratches = new Map<number, Scratch>();

export function scratchFor(version: number): Scratch {
  let scratch = scratches.get(version);
  if (scratch === undefined) {
    const lines = 2 * symbolSize(version);
    scratch = {
      data: new Uint8Array(dataCodewordCount(version)),
      codewords: new Uint8Array(totalCodewordCount(version)),
      unmasked: { rows: new Int32Array(lines), columns: new Int32Array(lines) },
    };
    scratches.set(version, scratch);
  }
  return scratch;
}
