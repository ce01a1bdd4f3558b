/**
 * `npm run bench:console`: the web console's weight and first render. Weight: each built file
 * (clients/console/dist, built first) raw and gzipped. First render: the embedded product started
 * as `npm start` starts it, Debian's Chromium loading /app/ BENCH_RUNS times in fresh contexts,
 * signed out (the sign-in page) and signed in (the lists page), reading the browser's own
 * first-contentful-paint; median with min-max.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { childEnv, freePort, spawnNode, stopProcessTree, waitUntil } from '@svc/testkit';
import { generateApiKey } from '@svc/gateway';
import { z } from 'zod';
import { buildConsole } from '../scripts/console-build.ts';
import { launch } from '../test/browser/browser.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const DIST = join(import.meta.dirname, '..', 'clients', 'console', 'dist');

await buildConsole();
for (const file of ['index.html', ...readdirSync(join(DIST, 'assets')).map((name) => join('assets', name))]) {
  const bytes = readFileSync(join(DIST, file));
  console.log(`${file}: ${bytes.length} bytes, ${gzipSync(bytes, { level: 9 }).length} gzipped`);
}

const key = generateApiKey();
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const product = spawnNode('scripts/start.ts', {
  env: childEnv({ PORT: String(port), HOST: '127.0.0.1', API_KEYS: key, LOG_LEVEL: 'warn' }),
  stdio: 'ignore',
});
const browser = await launch();
try {
  await waitUntil(async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.ok === true, 30_000, 'the product');
  for (const signedIn of [false, true]) {
    const paints: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      if (signedIn) await context.addInitScript(`sessionStorage.setItem('console.apiKey', ${JSON.stringify(key)})`);
      const page = await context.newPage();
      await page.goto(`${base}/app/`, { waitUntil: 'load' });
      await page.waitForFunction('document.getElementById("main").childElementCount > 0');
      paints.push(z.number().parse(await page.evaluate(`performance.getEntriesByName('first-contentful-paint')[0]?.startTime`)));
      await context.close();
    }
    paints.sort((a, b) => a - b);
    const median = paints[Math.floor(paints.length / 2)] ?? NaN;
    console.log(
      `${signedIn ? 'lists page (signed in)' : 'sign-in page'}: first contentful paint median ${median.toFixed(0)} ms ` +
        `(${paints[0]?.toFixed(0)}-${paints.at(-1)?.toFixed(0)} ms over ${RUNS} loads)`,
    );
  }
} finally {
  await browser.close();
  await stopProcessTree(product);
}
