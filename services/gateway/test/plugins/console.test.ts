/**
 * The console plugin on its own: the built files under /app/ with the Content-Security-Policy and
 * cache rules, `/` and `/app` redirected, and a gateway without a build saying how to get one.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import consoleRoutes, { CONSOLE_CSP } from '../../src/plugins/console.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'console-'));
  await mkdir(join(dir, 'built', 'assets'), { recursive: true });
  await writeFile(join(dir, 'built', 'index.html'), '<!doctype html><script type="module" src="/app/assets/index-abc.js"></script>');
  await writeFile(join(dir, 'built', 'assets', 'index-abc.js'), 'export {};');
});
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function gateway(consoleDir: string) {
  const app = Fastify();
  await app.register(consoleRoutes, { dir: consoleDir });
  return app;
}

describe('the console plugin', () => {
  it('serves the built files under /app/ with a strict CSP; hashed assets cached for a year, the page asked for each time', async () => {
    const app = await gateway(join(dir, 'built'));
    const page = await app.inject('/app/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const asset = await app.inject('/app/assets/index-abc.js');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).not.toContain('unsafe');
    await app.close();
  });

  it('redirects / and /app to /app/', async () => {
    const app = await gateway(join(dir, 'built'));
    expect((await app.inject('/')).headers.location).toBe('/app/');
    expect((await app.inject('/app')).headers.location).toBe('/app/');
    await app.close();
  });

  it('without a build, answers /app/ with an error that says to build', async () => {
    const app = await gateway(join(dir, 'missing'));
    const page = await app.inject('/app/');
    expect(page.statusCode).toBe(404);
    expect(page.json()).toEqual({ error: 'not_found', message: expect.stringContaining('npm run build') });
    await app.close();
  });
});
