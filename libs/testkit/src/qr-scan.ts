/**
 * A standard decoder for what we render: the SVG rasterised by resvg, the PNG decoded by pngjs,
 * or a module matrix painted into pixels, each read by jsQR. Tests assert that codes scan back to
 * exactly their data.
 */
import { Resvg } from '@resvg/resvg-js';
import jsqrModule from 'jsqr';
import { PNG } from 'pngjs';

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

/** A PNG decoded to RGBA pixels as its bytes say, alpha included. */
export function decodePng(png: Buffer): { width: number; height: number; pixels: Uint8Array } {
  const image = PNG.sync.read(png);
  return { width: image.width, height: image.height, pixels: new Uint8Array(image.data) };
}

/**
 * Reads a PNG as a viewer shows it: composited over a white page (jsQR reads red, green and blue
 * only, so a transparent pixel would otherwise count as whatever its colour channels hold), with
 * a white border of `borderModules` modules of `scale` pixels for a code drawn without margin.
 */
export function scanPng(png: Buffer, options: { borderModules?: number; scale?: number } = {}): string | undefined {
  const image = decodePng(png);
  const border = (options.borderModules ?? 0) * (options.scale ?? 1);
  const width = image.width + 2 * border;
  const height = image.height + 2 * border;
  const pixels = new Uint8ClampedArray(width * height * 4).fill(255);
  for (let y = 0; y < image.height; y += 1) {
    for (let x = 0; x < image.width; x += 1) {
      const from = (y * image.width + x) * 4;
      const to = ((y + border) * width + x + border) * 4;
      const alpha = image.pixels[from + 3]! / 255;
      for (let channel = 0; channel < 3; channel += 1) pixels[to + channel] = image.pixels[from + channel]! * alpha + 255 * (1 - alpha);
    }
  }
  return decode(pixels, width, height)?.text;
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
