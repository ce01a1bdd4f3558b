/**
 * The parts of the QR code standard (ISO/IEC 18004) tables that the product uses: error-correction
 * level M, versions 1..10. A larger version would be a larger contract, not a table edit here.
 */
export const MIN_VERSION = 1;
export const MAX_VERSION = 10;

export const symbolSize = (version: number): number => 17 + 4 * version;

interface BlockStructure {
  /** Error-correction codewords per block (the same for every block of a version). */
  eccPerBlock: number;
  /** Data codewords of each block, in order: group 1 blocks first, then the one-longer group 2. */
  dataPerBlock: readonly number[];
}

const repeat = (count: number, value: number): number[] => new Array<number>(count).fill(value);

/** Level M, from the standard's table 9. */
const LEVEL_M_BLOCKS: readonly BlockStructure[] = [
  { eccPerBlock: 10, dataPerBlock: [16] },
  { eccPerBlock: 16, dataPerBlock: [28] },
  { eccPerBlock: 26, dataPerBlock: [44] },
  { eccPerBlock: 18, dataPerBlock: repeat(2, 32) },
  { eccPerBlock: 24, dataPerBlock: repeat(2, 43) },
  { eccPerBlock: 16, dataPerBlock: repeat(4, 27) },
  { eccPerBlock: 18, dataPerBlock: repeat(4, 31) },
  { eccPerBlock: 22, dataPerBlock: [...repeat(2, 38), ...repeat(2, 39)] },
  { eccPerBlock: 22, dataPerBlock: [...repeat(3, 36), ...repeat(2, 37)] },
  { eccPerBlock: 26, dataPerBlock: [...repeat(4, 43), 44] },
];

export function blockStructure(version: number): BlockStructure {
  const blocks = LEVEL_M_BLOCKS[version - 1];
  if (blocks === undefined) throw new RangeError(`version ${version} is outside ${MIN_VERSION}..${MAX_VERSION}`);
  return blocks;
}

export function dataCodewordCount(version: number): number {
  return blockStructure(version).dataPerBlock.reduce((sum, count) => sum + count, 0);
}

/** Data and error-correction codewords together. */
export function totalCodewordCount(version: number): number {
  const { eccPerBlock, dataPerBlock } = blockStructure(version);
  return dataCodewordCount(version) + eccPerBlock * dataPerBlock.length;
}

/** Alignment pattern centre coordinates (the standard's annex E), used on both axes. */
const ALIGNMENT_CENTRES: readonly (readonly number[])[] = [
  [],
  [6, 18],
  [6, 22],
  [6, 26],
  [6, 30],
  [6, 34],
  [6, 22, 38],
  [6, 24, 42],
  [6, 26, 46],
  [6, 28, 50],
];

export function alignmentCentres(version: number): readonly number[] {
  const centres = ALIGNMENT_CENTRES[version - 1];
  if (centres === undefined) throw new RangeError(`version ${version} is outside ${MIN_VERSION}..${MAX_VERSION}`);
  return centres;
}
