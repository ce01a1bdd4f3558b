/**
 * A standard decoder for what we render: the SVG rasterised by resvg and read by jsQR, or a
 * module matrix painted into pixels. Tests assert that codes scan back to exactly their data.
 */
import { Resvg } from '@resvg/resvg-js';
import jsqrModule from 'jsqr';

type Decode = (data: Uint8ClampedArray, width: number, height: number) => { data: string; binaryData: number[] } | null;
// jsqr is CommonJS with a `default` export: under NodeNext the default import is its namespace.
const jsQR = (jsqrModule as unknown as { default: Decode }).default;

export interface Scan {
  /** The decoded bytes read as UTF-8. */
  text: string;
}

function decode(pixels: Uint8ClampedArray, width: number, height: number): Scan | undefined {
  const found = jsQR(pixels, width, height);
  return found === null ? undefined : { text: Buffer.from(found.binaryData).toString('utf8') };
}

/** Rasterises on a white page with a white border (a margin-0 code needs one to be found). */
export function scanSvg(svg: string, options: { borderModules?: number } = {}): string | undefined {
  const image = new Resvg(svg, { background: '#ffffff' }).render();
  const border = Math.ceil(((options.borderModules ?? 0) * image.width) / Number(/viewBox="0 0 (\d+)/.exec(svg)?.[1] ?? 1));
  if (border === 0) return decode(new Uint8ClampedArray(image.pixels), image.width, image.height)?.text;
  const width = image.width + 2 * border;
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255);
  for (let y = 0; y < image.height; y += 1) {
    pixels.set(image.pixels.subarray(y * image.width * 4, (y + 1) * image.width * 4), ((y + border) * width + border) * 4);
  }
  return decode(pixels, width, width)?.text;
}

/**
 * Paints a module matrix (1 = dark) with a 4-module quiet zone and reads it, as a camera would
 * see it at some resolution: jsQR's locator misses a few valid symbols at one pixel size and
 * reads them at another (a symbol identical to node-qrcode's, unread at 4 px per module, reads at
 * 3 and 8), so without a `scale` it tries 2, 4, 3, 6 and 8 pixels per module. 2 comes first:
 * jsQR's time grows with the pixels (about 2.7 ms a symbol at 2 px against 6 ms at 4), and every
 * symbol of the encoder's property test read at 2.
 */
export function scanModules(modules: number[][], scale?: number): string | undefined {
  if (scale !== undefined) return scanModulesAt(modules, scale);
  for (const pixels of [2, 4, 3, 6, 8]) {
    const text = scanModulesAt(modules, pixels);
    if (text !== undefined) return text;
  }
  return undefined;
}

function scanModulesAt(modules: number[][], scale: number): string | undefined {
  const size = modules.length + 8;
  const width = size * scale;
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255);
  modules.forEach((row, y) =>
    row.forEach((cell, x) => {
      if (cell !== 1) return;
      for (let dy = 0; dy < scale; dy += 1) {
        for (let dx = 0; dx < scale; dx += 1) {
          const offset = (((y + 4) * scale + dy) * width + (x + 4) * scale + dx) * 4;
          pixels.fill(0, offset, offset + 3);
        }
      }
    }),
  );
  return decode(pixels, width, width)?.text;
}
