/**
 * Where the browser tests put their screenshots: a plain `npm run test:browser` must leave the tree
 * as it was, so it writes them where git ignores them; `UPDATE_SCREENSHOTS=1` writes the ones
 * docs/console.md shows.
 */
import { spawnSync } from 'node:child_process';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCREENSHOTS } from './browser.ts';

const ROOT = join(import.meta.dirname, '..', '..');

describe('browser test screenshots', () => {
  it('go where git ignores them, or into docs/console/ with UPDATE_SCREENSHOTS=1', () => {
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      expect(relative(ROOT, SCREENSHOTS)).toBe(join('docs', 'console'));
      return;
    }
    expect(relative(ROOT, SCREENSHOTS).startsWith('docs'), 'a plain run stays out of docs/').toBe(false);
    const ignored = spawnSync('git', ['check-ignore', '--quiet', join(SCREENSHOTS, 'sign-in-laptop.png')], { cwd: ROOT });
    expect(ignored.status, `git check-ignore of ${SCREENSHOTS}: ${ignored.stderr?.toString() ?? ''}`).toBe(0);
  });
});
