/**
 * The documentation stands on its own: the README and docs/ link nothing outside the repository,
 * and no file of the repository cites the private specification it was written from (code
 * comments cite docs/api.md instead).
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const SKIPPED = new Set(['node_modules', '.git', 'coverage', 'dist', '.tmp']);
const TEXT = /\.(ts|js|mjs|json|md|ya?ml|sh)$|^Dockerfile$|^run$/;
const PRIVATE_SPEC = ['decisions.md', 'service-interface.md', 'shared/spec'];

async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries
      .filter((entry) => !SKIPPED.has(entry.name))
      .map((entry) =>
        entry.isDirectory() ? files(join(dir, entry.name)) : Promise.resolve(TEXT.test(entry.name) ? [join(dir, entry.name)] : []),
      ),
  );
  return nested.flat();
}

/** Relative link targets of a markdown file (external URLs and in-page anchors left out). */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!.split('#')[0]!)
    .filter((target) => target !== '' && !/^[a-z]+:/i.test(target));
}

describe('documentation in the repository', () => {
  it('README.md and docs/*.md link only inside the repository', async () => {
    const markdown = [join(ROOT, 'README.md'), ...(await files(join(ROOT, 'docs'))).filter((file) => file.endsWith('.md'))];
    const outside: string[] = [];
    for (const file of markdown) {
      for (const target of relativeLinks(await readFile(file, 'utf8'))) {
        if (relative(ROOT, resolve(dirname(file), target)).startsWith('..')) outside.push(`${relative(ROOT, file)} → ${target}`);
      }
    }
    expect(markdown.length).toBeGreaterThan(1);
    expect(outside).toEqual([]);
  });

  it('no file cites the private specification', async () => {
    const citing: string[] = [];
    const all = await files(ROOT);
    for (const file of all) {
      if (file === import.meta.filename) continue;
      const text = await readFile(file, 'utf8');
      for (const name of PRIVATE_SPEC) if (text.includes(name)) citing.push(`${relative(ROOT, file)}: ${name}`);
    }
    expect(all.length).toBeGreaterThan(100);
    expect(citing).toEqual([]);
  });
});
