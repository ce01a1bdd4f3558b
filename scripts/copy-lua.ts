/**
 * `npm run build`, after tsc: the Lua scripts a package's modules read at load (`lua/*.lua` beside
 * the module, read relative to its own file) copied beside the compiled files, src/ to dist/, so
 * that the built product (`npm run start:built`, the image) finds them where tsc put the modules.
 */
import { cpSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const packages = ['libs/shared', 'services'].flatMap((group) =>
  readdirSync(join(root, group), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(root, group, entry.name)),
);

let copied = 0;
for (const pkg of packages) {
  const src = join(pkg, 'src');
  if (!existsSync(src)) continue;
  for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.lua')) continue;
    cpSync(join(src, file), join(pkg, 'dist', file));
    copied += 1;
  }
}
console.log(`copied ${copied} Lua scripts to dist/`);
