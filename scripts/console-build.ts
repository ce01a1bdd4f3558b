/**
 * Builds the web console (clients/console) with Vite into clients/console/dist, which the gateway
 * serves at /app. `npm run build` runs it (`node --import tsx scripts/console-build.ts`);
 * `npm start` calls ensureConsoleBuilt() so that `npm ci && npm start` on a fresh clone shows the
 * console, and a change to its sources shows at the next start.
 *
 * Several processes may start at once (tests start the product many times): each builds into a
 * folder of its own and renames it into place, so a reader never sees half a build.
 */
import { existsSync } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const CONSOLE = join(import.meta.dirname, '..', 'clients', 'console');
const DIST = join(CONSOLE, 'dist');

async function newestMtime(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(path);
  const times = await Promise.all(entries.map((entry) => newestMtime(join(path, entry))));
  return Math.max(info.mtimeMs, ...times);
}

export async function buildConsole(): Promise<void> {
  // Loaded only when building: a built deployment serves dist/ and has no Vite.
  const { build } = await import('vite');
  const out = `${DIST}.${process.pid}.${Date.now()}`;
  await build({
    root: CONSOLE,
    base: '/app/',
    logLevel: 'warn',
    configFile: false,
    build: {
      outDir: out,
      emptyOutDir: true,
      // The polyfill would be inline script, which the Content-Security-Policy forbids; every
      // browser the console targets preloads modules itself.
      modulePreload: { polyfill: false },
      target: 'es2022',
      reportCompressedSize: false,
    },
  });
  const old = `${out}.old`;
  if (existsSync(DIST)) await rename(DIST, old).catch(() => undefined);
  await rename(out, DIST).catch(async (error: unknown) => {
    // Another process put its build in place first: theirs is as good.
    await rm(out, { recursive: true, force: true });
    if (!existsSync(DIST)) throw error;
  });
  await rm(old, { recursive: true, force: true });
}

/** Builds when dist/ is missing or older than the console's sources (a clone has no dist/). */
export async function ensureConsoleBuilt(): Promise<void> {
  const index = join(DIST, 'index.html');
  if (existsSync(index)) {
    const sources = existsSync(join(CONSOLE, 'src')) ? await newestMtime(join(CONSOLE, 'src')) : 0;
    const html = existsSync(join(CONSOLE, 'index.html')) ? (await stat(join(CONSOLE, 'index.html'))).mtimeMs : 0;
    if ((await stat(index)).mtimeMs >= Math.max(sources, html)) return;
  }
  await buildConsole();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await buildConsole();
