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
 * Path text is written as ASCII bytes into one buffer: per run of dark modules
 * `M<x> <y>h<run>v1h-<run>z`. Building it from template strings cost as much CPU as encoding the
 * symbol; the digits are written inline (no helper closure per call), which took the path from
 * about 8 to 5 us for a version 6 symbol. Coordinates stay below 100 (57 modules plus two margins
 * of at most 20).
 */
let pathBuffer = Buffer.alloc(32 * 1024);
const MAX_RUN_BYTES = 'M00 00h00v1h-00z'.length;

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

export function darkModulesPath(matrix: ModuleMatrix, margin: number): string {
  const { size, modules } = matrix;
  const bound = size * Math.ceil(size / 2) * MAX_RUN_BYTES;
  if (pathBuffer.length < bound) pathBuffer = Buffer.alloc(bound);
  const out = pathBuffer;
  let length = 0;
  for (let y = 0; y < size; y += 1) {
    const row = y * size;
    let x = 0;
    while (x < size) {
      if (modules[row + x] !== 1) {
        x += 1;
        continue;
      }
      const start = x;
      x += 1;
      while (x < size && modules[row + x] === 1) x += 1;
      const run = x - start;
      out[length++] = 0x4d; // M
      length = writeNumber(out, length, start + margin);
      out[length++] = 0x20;
      length = writeNumber(out, length, y + margin);
      out[length++] = 0x68; // h
      length = writeNumber(out, length, run);
      out[length++] = 0x76; // v
      out[length++] = 0x31; // 1
      out[length++] = 0x68; // h
      out[length++] = 0x2d; // -
      length = writeNumber(out, length, run);
      out[length++] = 0x7a; // z
    }
  }
  return out.toString('latin1', 0, length);
}

export function renderSvg(matrix: ModuleMatrix, options: { scale: number; margin: number; dark: string; light: string }): string {
  const modules = matrix.size + 2 * options.margin;
  const pixels = modules * options.scale;
  const light = paint(options.light);
  const dark = paint(options.dark);
  const background = light.opacity === 0 ? '' : `<rect width="${modules}" height="${modules}" ${fillAttributes(light)}/>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${pixels}" height="${pixels}" viewBox="0 0 ${modules} ${modules}" shape-rendering="crispEdges">` +
    `${background}<path ${fillAttributes(dark)} d="${darkModulesPath(matrix, options.margin)}"/></svg>`
  );
}
