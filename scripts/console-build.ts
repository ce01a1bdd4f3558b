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
import { readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(import.meta.dirname, '..');
const CONSOLE = join(ROOT, 'clients', 'console');
const DIST = join(CONSOLE, 'dist');
/**
 * Sources bundled into the console besides its own: the shared packages it imports the service's
 * rules from (its package.json's @svc/ dependencies). A change to the address-column rule must
 * rebuild the console too, or its preview would pick by the old rule until someone builds.
 */
async function sourceFolders(): Promise<string[]> {
  const manifest: unknown = JSON.parse(await readFile(join(CONSOLE, 'package.json'), 'utf8'));
  const dependencies =
    typeof manifest === 'object' && manifest !== null && 'dependencies' in manifest && typeof manifest.dependencies === 'object'
      ? Object.keys(manifest.dependencies ?? {})
      : [];
  // A workspace package lives in libs/shared/ or, for the QR encoder (@svc/qr-worker/encoder), in services/.
  const shared = dependencies
    .filter((name) => name.startsWith('@svc/'))
    .flatMap((name) => [join(ROOT, 'libs', 'shared', name.slice(5), 'src'), join(ROOT, 'services', name.slice(5), 'src')]);
  return [join(CONSOLE, 'src'), ...shared].filter((folder) => existsSync(folder));
}

async function newestMtime(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(path);
  const times = await Promise.all(entries.map((entry) => newestMtime(join(path, entry))));
  return Math.max(info.mtimeMs, ...times);
}

export async function buildConsole(): Promise<void> {
  // Loaded only when building: a built deployment serves dist/ and has no Vite.
  const { build, defaultClientConditions } = await import('vite');
  const out = `${DIST}.${process.pid}.${Date.now()}`;
  await build({
    root: CONSOLE,
    base: '/app/',
    logLevel: 'warn',
    configFile: false,
    resolve: {
      // The console bundles the service's pure rules (address column, dedup key, price) from the
      // workspace packages. Their `production` condition points at tsc's dist/, which a fresh
      // clone's `npm start` has not built and which lags the sources until the next `tsc -b`:
      // the console takes the sources, the same code the service runs under tsx.
      conditions: defaultClientConditions.filter((condition) => condition !== 'development|production'),
    },
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

/** Builds when dist/ is missing or older than the console's sources or the shared ones it bundles (a clone has no dist/). */
export async function ensureConsoleBuilt(): Promise<void> {
  const index = join(DIST, 'index.html');
  if (existsSync(index)) {
    const sources = Math.max(0, ...(await Promise.all((await sourceFolders()).map(newestMtime))));
    const html = existsSync(join(CONSOLE, 'index.html')) ? (await stat(join(CONSOLE, 'index.html'))).mtimeMs : 0;
    if ((await stat(index)).mtimeMs >= Math.max(sources, html)) return;
  }
  await buildConsole();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await buildConsole();
