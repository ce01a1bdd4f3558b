/**
 * SVG drawn from the module matrix rather than by `qrcode`'s own renderer, which does not
 * validate colours (a crafted colour would inject markup), ignores `scale`, and strokes its paths
 * (banding in some viewers). Here: filled shapes, one path of horizontal runs, width and height in
 * pixels, viewBox in modules, crispEdges. Colours arrive normalised to `#rrggbbaa`.
 */
import type { ModuleMatrix } from './encoder/index.ts';

const COLOUR = /^#[0-9a-f]{8}$/;

function paint(colour: string): { fill: string; opacity: number } {
  if (!COLOUR.test(colour)) throw new Error('colour not normalised');
  return { fill: colour.slice(0, 7), opacity: Number.parseInt(colour.slice(7), 16) / 255 };
}

const fillAttributes = ({ fill, opacity }: { fill: string; opacity: number }) =>
  opacity >= 1 ? `fill="${fill}"` : `fill="${fill}" fill-opacity="${Number(opacity.toFixed(3))}"`;

/**
 * The whole SVG is written as ASCII bytes into one reused buffer and read out as one string:
 * template strings cost as much CPU as encoding the symbol, and a concatenated string is a rope
 * that is flattened (copied again) when sent. Per run of dark modules the path says
 * `M<x> <y>h<run>v1h-<run>z`, the runs found from the packed row words (a run start is a dark bit
 * after a light one, its end a dark bit before a light one) rather than module by module.
 * Coordinates stay below 100 (57 modules plus two margins of at most 20).
 */
let svgBuffer = Buffer.alloc(32 * 1024);
const MAX_RUN_BYTES = 'M00 00h00v1h-00z'.length;
const TAIL = '"/></svg>';

/** Writes `value` (0..99) at `at` in `out`; returns the position after it. */
function writeNumber(out: Buffer, at: number, value: number): number {
  if (value < 10) {
    out[at] = 48 + value;
    return at + 1;
  }
  const tens = (value / 10) | 0;
  out[at] = 48 + tens;
  out[at + 1] = 48 + value - 10 * tens;
  return at + 2;
}

/** The index of the lowest set bit of a non-zero word. */
const lowestBit = (word: number) => 31 - Math.clz32(word & -word);

function writeRun(out: Buffer, at: number, x: number, y: number, run: number): number {
  out[at++] = 0x4d; // M
  at = writeNumber(out, at, x);
  out[at++] = 0x20;
  at = writeNumber(out, at, y);
  out[at++] = 0x68; // h
  at = writeNumber(out, at, run);
  out[at++] = 0x76; // v
  out[at++] = 0x31; // 1
  out[at++] = 0x68; // h
  out[at++] = 0x2d; // -
  at = writeNumber(out, at, run);
  out[at++] = 0x7a; // z
  return at;
}

/** Writes the path data of the dark modules at `at` in `out` (which has room for it); returns the position after it. */
function writePath(out: Buffer, at: number, matrix: ModuleMatrix, margin: number): number {
  const { size, rows } = matrix;
  for (let y = 0; y < size; y += 1) {
    const lo = rows[2 * y]!;
    const hi = rows[2 * y + 1]!;
    // The k-th start pairs with the k-th end; lo's bits come before hi's.
    let startsLo = lo & ~(lo << 1);
    let startsHi = hi & ~((hi << 1) | (lo >>> 31));
    let endsLo = lo & ~((lo >>> 1) | (hi << 31));
    let endsHi = hi & ~(hi >>> 1);
    while ((startsLo | startsHi) !== 0) {
      let start: number;
      if (startsLo !== 0) {
        start = lowestBit(startsLo);
        startsLo &= startsLo - 1;
      } else {
        start = 32 + lowestBit(startsHi);
        startsHi &= startsHi - 1;
      }
      let end: number;
      if (endsLo !== 0) {
        end = lowestBit(endsLo);
        endsLo &= endsLo - 1;
      } else {
        end = 32 + lowestBit(endsHi);
        endsHi &= endsHi - 1;
      }
      at = writeRun(out, at, start + margin, y + margin, end + 1 - start);
    }
  }
  return at;
}

/** Room for the path of any symbol of `size` (at most one run per two modules of a row). */
const pathBound = (size: number) => size * Math.ceil(size / 2) * MAX_RUN_BYTES;

function bufferFor(bytes: number): Buffer {
  if (svgBuffer.length < bytes) svgBuffer = Buffer.alloc(bytes);
  return svgBuffer;
}

/** The path data alone (`d`), for tests. */
export function darkModulesPath(matrix: ModuleMatrix, margin: number): string {
  const out = bufferFor(pathBound(matrix.size));
  return out.toString('latin1', 0, writePath(out, 0, matrix, margin));
}

export function renderSvg(matrix: ModuleMatrix, options: { scale: number; margin: number; dark: string; light: string }): string {
  const modules = matrix.size + 2 * options.margin;
  const pixels = modules * options.scale;
  const light = paint(options.light);
  const dark = paint(options.dark);
  const background = light.opacity === 0 ? '' : `<rect width="${modules}" height="${modules}" ${fillAttributes(light)}/>`;
  const head = `<svg xmlns="http://www.w3.org/2000/svg" width="${pixels}" height="${pixels}" viewBox="0 0 ${modules} ${modules}" shape-rendering="crispEdges">${background}<path ${fillAttributes(dark)} d="`;
  const out = bufferFor(head.length + pathBound(matrix.size) + TAIL.length);
  let length = out.write(head, 0, 'latin1');
  length = writePath(out, length, matrix, options.margin);
  length += out.write(TAIL, length, 'latin1');
  return out.toString('latin1', 0, length);
}
