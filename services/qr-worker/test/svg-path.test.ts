/** The byte-level path writer says exactly what the plain string version says, on any matrix and margin. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { darkModulesPath } from '../src/svg.ts';

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

describe('darkModulesPath', () => {
  it('matches the plain string version for versions 1..10 and margins 0..20', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }).chain((version) => {
          const size = 17 + 4 * version;
          return fc.tuple(
            fc.constant(size),
            fc.uint8Array({ minLength: size * size, maxLength: size * size, max: 1 }),
            fc.integer({ min: 0, max: 20 }),
          );
        }),
        ([size, modules, margin]) => {
          expect(darkModulesPath({ version: (size - 17) / 4, size, modules }, margin)).toBe(plainPath(size, modules, margin));
        },
      ),
      { numRuns: 300 },
    );
  });
});
