#!/usr/bin/env node
// The `verify-list` command. From a checkout it runs the TypeScript source through tsx; with
// `--conditions=production` (after `npm run build`) it runs the compiled dist/ instead.
const entry = import.meta.resolve('@svc/verify-list/main');
if (entry.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(entry);
