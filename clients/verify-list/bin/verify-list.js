#!/usr/bin/env node
// The `verify-list` command. From a checkout it runs the TypeScript source through tsx; with
// `--conditions=production` (after `npm run build`), and where it was installed from its packed
// tarball (no src/ there: `npm pack` builds dist/ and ships only that), it runs the compiled dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = import.meta.resolve('@email-qr/verify-list/main');
if (!entry.endsWith('.ts')) await import(entry);
else if (!existsSync(fileURLToPath(entry))) await import('../dist/main.js');
else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(entry);
}
