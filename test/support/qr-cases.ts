/**
 * The QR cases the SVG scan tests use, shared so that every rendering (REST SVG, the tools' PNG)
 * is held to the same ones: random colour pairs (half drawn dark-on-light, so that many are
 * accepted and must scan) and the fixed rendering table (scales, margins, colours, contents).
 */
import fc from 'fast-check';

const hex = (min: number, max: number) => fc.integer({ min, max }).map((value) => value.toString(16).padStart(2, '0'));
const opaque = (min: number, max: number) => fc.tuple(hex(min, max), hex(min, max), hex(min, max)).map((parts) => parts.join(''));

/** `[dark, light]` as sent, RRGGBB or RRGGBBAA without `#`. */
export const colourPair: fc.Arbitrary<[string, string]> = fc.oneof(
  fc
    .tuple(fc.tuple(opaque(0, 255), hex(0, 255)), fc.tuple(opaque(0, 255), hex(0, 255)))
    .map(([dark, light]): [string, string] => [dark.join(''), light.join('')]),
  fc.tuple(opaque(0, 110), opaque(150, 255)),
);

/** Scale at which colour pairs are scanned: jsQR's binarizer misreads some pairs near 3:1 at exactly 8 (test/http/qr-readability.test.ts). */
export const COLOUR_PAIR_SCALE = 5;

/** The rendering table of services/qr-worker/test/scan-round-trip.test.ts, as tool arguments (JSON values). */
export const RENDERING_CASES: Array<[string, Record<string, unknown>]> = [
  ...[2, 3, 8, 40].map((scale): [string, Record<string, unknown>] => [`scale ${scale}`, { data: 'https://example.com/?q=scan', scale }]),
  ...[0, 1, 4, 20].map((margin): [string, Record<string, unknown>] => [`margin ${margin}`, { data: 'margin test', margin, scale: 4 }]),
  ...(
    [
      ['#000', '#fff'],
      ['1a237e', 'FFF8E1'],
      ['#000000cc', 'ffffffff'],
      ['#000000', '#ffffff00'],
      ['#222d', 'eeef'],
    ] as const
  ).map(([dark, light]): [string, Record<string, unknown>] => [`dark ${dark} light ${light}`, { data: 'colours', dark, light }]),
  ...(
    [
      ['UTF-8 text', 'Grüße aus Köln — façade, naïve'],
      ['emoji', 'QR 🚀✨ 👩‍💻'],
      ['CJK', '二维码测试'],
      ['213 bytes at the limit', 'a'.repeat(213)],
      ['513 digits at the limit', '9'.repeat(513)],
      ['upper-case alphanumeric', 'HTTPS://EXAMPLE.COM/ABC-123'],
    ] as const
  ).map(([label, data]): [string, Record<string, unknown>] => [label, { data, scale: 3 }]),
];
