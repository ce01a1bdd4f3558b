/**
 * The path writer, reading runs from packed row words, says exactly what the plain string version
 * says reading the module matrix, on any matrix and margin, and on encoded symbols (whose packed
 * rows and unpacked modules must agree).
 */
import fc from 'fast-check';
import { unicodeText } from '@svc/testkit/properties';
import { describe, expect, it } from 'vitest';
import { encodeText } from '../src/encoder/index.ts';
import { darkModulesPath, renderSvg } from '../src/svg.ts';

function plainPath(size: number, modules: Uint8Array, margin: number): string {
  let path = '';
  for (let y = 0; y < size; y += 1) {
    for (let x = 0; x < size; x += 1) {
      if (modules[y * size + x] !== 1 || (x > 0 && modules[y * size + x - 1] === 1)) continue;
      let run = 1;
      while (x + run < size && modules[y * size + x + run] === 1) run += 1;
      path += `M${x + margin} ${y + margin}h${run}v1h-${run}z`;
    }
  }
  return path;
}

/** Two words per row, bit x % 32 of word 2y + (x >= 32 ? 1 : 0) is module (y, x). */
function packRows(size: number, modules: Uint8Array): Int32Array {
  const rows = new Int32Array(2 * size);
  for (let y = 0; y < size; y += 1) {
    for (let x = 0; x < size; x += 1) if (modules[y * size + x] === 1) rows[2 * y + (x >>> 5)]! |= 1 << (x & 31);
  }
  return rows;
}

describe('darkModulesPath', () => {
  it('matches the plain string version for versions 1..10, margins 0..20 and any share of dark modules', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }).chain((version) => {
          const size = 17 + 4 * version;
          // Dark shares from none to all, so that runs of every length cross the word boundary and reach the edge.
          const modules = fc
            .tuple(fc.integer({ min: 0, max: 10 }), fc.uint8Array({ minLength: size * size, maxLength: size * size, max: 9 }))
            .map(([dark, values]) => values.map((value) => (value < dark ? 1 : 0)));
          return fc.tuple(fc.constant(size), modules, fc.integer({ min: 0, max: 20 }));
        }),
        ([size, modules, margin]) => {
          const matrix = { version: (size - 17) / 4, size, rows: packRows(size, modules), modules };
          expect(darkModulesPath(matrix, margin)).toBe(plainPath(size, modules, margin));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('on encoded symbols, the SVG carries the path of their modules', () => {
    fc.assert(
      fc.property(unicodeText({ minLength: 1, maxLength: 200 }), fc.integer({ min: 0, max: 20 }), (text, margin) => {
        const symbol = encodeText(text);
        if (symbol === undefined) return;
        const svg = renderSvg(symbol, { scale: 4, margin, dark: '#000000ff', light: '#ffffffff' });
        expect(svg).toContain(` d="${plainPath(symbol.size, symbol.modules, margin)}"/></svg>`);
      }),
      { numRuns: 200 },
    );
  });
});
