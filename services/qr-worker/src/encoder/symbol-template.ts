/**
 * What every symbol of a version shares, built once per version: the function patterns (finders,
 * separators, timing, alignment, version word, the dark module), the order in which data modules
 * are filled, and for each of the eight masks the modules it flips plus that mask's format word.
 *
 * Modules are kept as packed lines: two 32-bit words per row (and per column), bit x of row y is
 * module (y, x). Up to 57 modules (version 10) fit a line; masks and penalties then work a word at
 * a time. The layout follows node-qrcode's, so equal codewords give an equal symbol.
 */
import { formatBits, versionBits } from './format-version-info.ts';
import { alignmentCentres, symbolSize } from './level-m-tables.ts';
import { transposeLines } from './bit-transpose.ts';
import { maskApplies } from './masks.ts';

export const MASK_COUNT = 8;

export interface SymbolTemplate {
  version: number;
  size: number;
  /** The function patterns as packed rows. */
  functionRows: Int32Array;
  /**
   * The data modules in filling order, as placement units: one module, or two side by side in one
   * row (filled right then left, as the order goes), which take the next one or two codeword bits
   * with one write. Unit u ORs those bits, shifted left by unitShifts[u], into row word unitWords[u].
   */
  unitWords: Uint8Array;
  unitShifts: Uint8Array;
  unitBits: Uint8Array;
  /** Per mask: the data modules it flips and the dark modules of its format word. */
  maskRows: readonly Int32Array[];
  maskColumns: readonly Int32Array[];
}

/** Sets module (row, column) dark in both packings. */
function setDark(rows: Int32Array, columns: Int32Array, row: number, column: number): void {
  rows[2 * row + (column >>> 5)]! |= 1 << (column & 31);
  columns[2 * column + (row >>> 5)]! |= 1 << (row & 31);
}

class Grid {
  readonly dark: Uint8Array;
  readonly reserved: Uint8Array;
  constructor(readonly size: number) {
    this.dark = new Uint8Array(size * size);
    this.reserved = new Uint8Array(size * size);
  }
  reserve(row: number, column: number, dark: boolean): void {
    this.reserved[row * this.size + column] = 1;
    this.dark[row * this.size + column] = dark ? 1 : 0;
  }
}

function drawFinders(grid: Grid): void {
  const { size } = grid;
  for (const [top, left] of [
    [0, 0],
    [size - 7, 0],
    [0, size - 7],
  ] as const) {
    for (let r = -1; r <= 7; r += 1) {
      for (let c = -1; c <= 7; c += 1) {
        if (top + r < 0 || top + r >= size || left + c < 0 || left + c >= size) continue;
        const ring = (r >= 0 && r <= 6 && (c === 0 || c === 6)) || (c >= 0 && c <= 6 && (r === 0 || r === 6));
        const centre = r >= 2 && r <= 4 && c >= 2 && c <= 4;
        grid.reserve(top + r, left + c, ring || centre);
      }
    }
  }
}

function drawTiming(grid: Grid): void {
  for (let i = 8; i < grid.size - 8; i += 1) {
    grid.reserve(i, 6, i % 2 === 0);
    grid.reserve(6, i, i % 2 === 0);
  }
}

function drawAlignment(grid: Grid, version: number): void {
  const centres = alignmentCentres(version);
  const last = centres.length - 1;
  centres.forEach((row, i) =>
    centres.forEach((column, j) => {
      // Not where a finder pattern is.
      if ((i === 0 && j === 0) || (i === 0 && j === last) || (i === last && j === 0)) return;
      for (let r = -2; r <= 2; r += 1) {
        for (let c = -2; c <= 2; c += 1) grid.reserve(row + r, column + c, Math.max(Math.abs(r), Math.abs(c)) !== 1);
      }
    }),
  );
}

/** Calls `visit` with the two positions of each of the 15 format bits (bit 0 first), as node-qrcode lays them. */
function forEachFormatModule(size: number, visit: (bit: number, row: number, column: number) => void): void {
  for (let bit = 0; bit < 15; bit += 1) {
    visit(bit, bit < 6 ? bit : bit < 8 ? bit + 1 : size - 15 + bit, 8);
    visit(bit, 8, bit < 8 ? size - bit - 1 : bit < 9 ? 7 : 14 - bit);
  }
}

function drawVersion(grid: Grid, version: number): void {
  if (version < 7) return;
  const bits = versionBits(version);
  for (let i = 0; i < 18; i += 1) {
    const dark = ((bits >>> i) & 1) === 1;
    const along = Math.floor(i / 3);
    const across = (i % 3) + grid.size - 11;
    grid.reserve(along, across, dark);
    grid.reserve(across, along, dark);
  }
}

/** Data modules, two columns at a time from the right, upwards then downwards, skipping the timing column. */
function fillingOrder(grid: Grid): { rows: Uint8Array; columns: Uint8Array } {
  const { size } = grid;
  const rows: number[] = [];
  const columns: number[] = [];
  let upwards = true;
  for (let right = size - 1; right > 0; right -= 2) {
    if (right === 6) right -= 1;
    for (let step = 0; step < size; step += 1) {
      const row = upwards ? size - 1 - step : step;
      for (const column of [right, right - 1]) {
        if (grid.reserved[row * size + column] === 1) continue;
        rows.push(row);
        columns.push(column);
      }
    }
    upwards = !upwards;
  }
  return { rows: Uint8Array.from(rows), columns: Uint8Array.from(columns) };
}

function buildTemplate(version: number): SymbolTemplate {
  const size = symbolSize(version);
  const grid = new Grid(size);
  drawFinders(grid);
  drawTiming(grid);
  drawAlignment(grid, version);
  forEachFormatModule(size, (_bit, row, column) => grid.reserve(row, column, false));
  grid.reserve(size - 8, 8, true);
  drawVersion(grid, version);

  const functionRows = new Int32Array(2 * size);
  for (let row = 0; row < size; row += 1) {
    for (let column = 0; column < size; column += 1)
      if (grid.dark[row * size + column] === 1) functionRows[2 * row + (column >>> 5)]! |= 1 << (column & 31);
  }
  const maskRows: Int32Array[] = [];
  const maskColumns: Int32Array[] = [];
  for (let mask = 0; mask < MASK_COUNT; mask += 1) {
    const rows = new Int32Array(2 * size);
    const columns = new Int32Array(2 * size);
    for (let row = 0; row < size; row += 1) {
      for (let column = 0; column < size; column += 1) {
        if (grid.reserved[row * size + column] === 0 && maskApplies(mask, row, column)) setDark(rows, columns, row, column);
      }
    }
    const format = formatBits(mask);
    forEachFormatModule(size, (bit, row, column) => {
      if (((format >>> bit) & 1) === 1) setDark(rows, columns, row, column);
    });
    maskRows.push(rows);
    maskColumns.push(columns);
  }
  return { version, size, functionRows, ...placementUnits(fillingOrder(grid)), maskRows, maskColumns };
}

/** The filling order cut into placement units: a pair wherever the next module is the left neighbour in the same row word. */
function placementUnits(order: { rows: Uint8Array; columns: Uint8Array }): Pick<SymbolTemplate, 'unitWords' | 'unitShifts' | 'unitBits'> {
  const words: number[] = [];
  const shifts: number[] = [];
  const bits: number[] = [];
  for (let k = 0; k < order.rows.length;) {
    const row = order.rows[k]!;
    const column = order.columns[k]!;
    const pair = order.rows[k + 1] === row && order.columns[k + 1] === column - 1 && (column & 31) !== 0;
    const lowest = pair ? column - 1 : column;
    words.push(2 * row + (lowest >>> 5));
    shifts.push(lowest & 31);
    bits.push(pair ? 2 : 1);
    k += pair ? 2 : 1;
  }
  return { unitWords: Uint8Array.from(words), unitShifts: Uint8Array.from(shifts), unitBits: Uint8Array.from(bits) };
}

const templates = new Map<number, SymbolTemplate>();

export function symbolTemplate(version: number): SymbolTemplate {
  let template = templates.get(version);
  if (template === undefined) {
    template = buildTemplate(version);
    templates.set(version, template);
  }
  return template;
}

/** A symbol as packed rows and as packed columns (two words per line each). */
export interface PackedLines {
  rows: Int32Array;
  columns: Int32Array;
}

/**
 * The unmasked symbol, in `out` (fresh arrays unless given): function patterns plus the codewords' bits; remainder bits stay light. The
 * codewords are read as one bit stream, a byte at a time, and every unit's bits are ORed in light
 * or dark alike: a branch per bit mispredicted about half the time, codeword bits being as good as
 * random.
 */
export function placeCodewords(
  template: SymbolTemplate,
  codewords: Uint8Array,
  out: PackedLines = { rows: new Int32Array(2 * template.size), columns: new Int32Array(2 * template.size) },
): PackedLines {
  const { rows, columns } = out;
  rows.set(template.functionRows);
  const { unitWords, unitShifts, unitBits } = template;
  let pending = 0;
  let available = 0;
  for (let unit = 0, next = 0; unit < unitWords.length; unit += 1) {
    if (available < 2) {
      pending = (pending << 8) | (next < codewords.length ? codewords[next]! : 0);
      next += 1;
      available += 8;
    }
    const bits = unitBits[unit]!;
    available -= bits;
    rows[unitWords[unit]!]! |= ((pending >>> available) & ((1 << bits) - 1)) << unitShifts[unit]!;
  }
  transposeLines(rows, template.size, columns);
  return out;
}
