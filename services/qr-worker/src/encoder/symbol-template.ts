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
import { maskApplies } from './masks.ts';

export const MASK_COUNT = 8;

export interface SymbolTemplate {
  version: number;
  size: number;
  functionRows: Int32Array;
  functionColumns: Int32Array;
  /** Row and column of each data module, in filling order. */
  dataRows: Uint8Array;
  dataColumns: Uint8Array;
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
  const functionColumns = new Int32Array(2 * size);
  for (let row = 0; row < size; row += 1) {
    for (let column = 0; column < size; column += 1)
      if (grid.dark[row * size + column] === 1) setDark(functionRows, functionColumns, row, column);
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
  const order = fillingOrder(grid);
  return { version, size, functionRows, functionColumns, dataRows: order.rows, dataColumns: order.columns, maskRows, maskColumns };
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

/** The unmasked symbol: function patterns plus the codewords' dark bits; remainder bits stay light. */
export function placeCodewords(template: SymbolTemplate, codewords: Uint8Array): { rows: Int32Array; columns: Int32Array } {
  const rows = Int32Array.from(template.functionRows);
  const columns = Int32Array.from(template.functionColumns);
  const { dataRows, dataColumns } = template;
  for (let i = 0; i < codewords.length; i += 1) {
    const codeword = codewords[i]!;
    for (let bit = 0; bit < 8; bit += 1) {
      if (((codeword << bit) & 0x80) !== 0) setDark(rows, columns, dataRows[8 * i + bit]!, dataColumns[8 * i + bit]!);
    }
  }
  return { rows, columns };
}
