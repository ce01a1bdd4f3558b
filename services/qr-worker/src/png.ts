/**
 * The PNG form of a code, for clients that show images but not SVG (chat clients read `image`
 * blocks of the tool servers): the same matrix, colours (alpha included), scale and margin as
 * the SVG, drawn as a two-colour bitmap and handed to the encoder (`png-encoder.ts`), as
 * node-qrcode keeps its renderers apart from its encoders.
 */
import type { ModuleMatrix } from './encoder/index.ts';
import { encodePng, type TwoColourImage } from './png-encoder.ts';

/** `#rrggbbaa` → `[r, g, b, a]`. */
function rgba(colour: string): number[] {
  if (!/^#[0-9a-f]{8}$/.test(colour)) throw new Error('colour not normalised');
  return [1, 3, 5, 7].map((index) => Number.parseInt(colour.slice(index, index + 2), 16));
}

/**
 * `top` drawn over `bottom` (Porter-Duff "over", straight alpha): what the SVG shows where its
 * dark path lies on its light background. A dark module's pixel must be that, not the dark colour
 * alone: a translucent dark colour over a translucent light one would otherwise show the page
 * through, lighter than the contrast the readability rule measured (black at 45 % over black at
 * 24 %, on white, no longer scanned).
 */
function over(top: number[], bottom: number[]): number[] {
  const topAlpha = top[3]! / 255;
  const bottomAlpha = bottom[3]! / 255;
  const alpha = topAlpha + bottomAlpha * (1 - topAlpha);
  if (alpha === 0) return [0, 0, 0, 0];
  const channel = (index: number) => Math.round((top[index]! * topAlpha + bottom[index]! * bottomAlpha * (1 - topAlpha)) / alpha);
  return [channel(0), channel(1), channel(2), Math.round(alpha * 255)];
}

/** The code as a bitmap: `scale` pixels per module, `margin` modules of light around it. */
export function qrBitmap(matrix: ModuleMatrix, options: { scale: number; margin: number; dark: string; light: string }): TwoColourImage {
  const { size, modules } = matrix;
  const { scale, margin } = options;
  const width = (size + 2 * margin) * scale;
  const rowBytes = Math.ceil(width / 8);
  const bits = new Uint8Array(rowBytes * width);
  for (let y = 0; y < size; y += 1) {
    const row = bits.subarray((margin + y) * scale * rowBytes, ((margin + y) * scale + 1) * rowBytes);
    for (let x = 0; x < size; x += 1) {
      if (modules[y * size + x] !== 1) continue;
      for (let pixel = (margin + x) * scale, end = pixel + scale; pixel < end; pixel += 1) row[pixel >> 3]! |= 0x80 >> (pixel & 7);
    }
    // The module row is `scale` pixels high: copy its first pixel row down.
    for (let copy = 1; copy < scale; copy += 1)
      bits.copyWithin(((margin + y) * scale + copy) * rowBytes, (margin + y) * scale * rowBytes, ((margin + y) * scale + 1) * rowBytes);
  }
  const light = rgba(options.light);
  return { width, height: width, colours: [light, over(rgba(options.dark), light)], bits };
}

export function renderPng(matrix: ModuleMatrix, options: { scale: number; margin: number; dark: string; light: string }): Buffer {
  return encodePng(qrBitmap(matrix, options));
}
