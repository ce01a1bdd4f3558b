/**
 * The README's promises, as processes: `npm start` with no configuration serves the product in
 * embedded mode and prints a development key that gets a scannable QR code; `npm run keys`
 * issues, lists and revokes keys in Redis, and the gateway honours them at once. The scripts'
 * entry points run under `node` directly (what the npm scripts run), so that no wrapper process
 * outlives the test.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { dropPrefix, freePort, scanSvg, spawnNode, stopProcessTree, testRedisUrl, uniquePrefix, childEnv } from '@svc/testkit';
import { call, startServer } from '../support/servers.ts';
import { consoleUrl } from '@svc/gateway';

const run = promisify(execFile);
const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;

describe('npm start (embedded mode, nothing configured)', () => {
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child !== undefined) await stopProcessTree(child);
  });

  it('is the entry point the test runs', () => {
    expect(scripts.start).toBe('node --import tsx scripts/start.ts');
    expect(scripts.keys).toBe('node --import tsx services/gateway/src/keys-cli.ts');
  });

  it('prints a development key once and the console address, and serves a scannable QR code with it', async () => {
    // Below the kernel's ephemeral range and free: a random port up there can be a live
    // connection's, and the product then exits on EADDRINUSE before printing its key.
    const port = await freePort();
    const env: Record<string, string | undefined> = childEnv({ PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' });
    child = spawnNode('scripts/start.ts', { env });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await expect
      .poll(() => /sk_[A-Za-z0-9]{32}/.exec(output)?.[0], { timeout: 30_000, interval: 100 })
      .toBeDefined()
      .catch((error: unknown) => {
        throw new Error(`no development key printed; the process wrote:\n${output}`, { cause: error });
      });
    const key = /sk_[A-Za-z0-9]{32}/.exec(output)![0];
    expect(output.match(/sk_[A-Za-z0-9]{32}/g)).toHaveLength(1);
    // And where the console is, beside the key (the key itself never in a URL).
    await expect.poll(() => output, { timeout: 5_000 }).toContain(`Web console: http://127.0.0.1:${port}/app (sign in with the key above)`);
    expect(consoleUrl('http://0.0.0.0:3000')).toBe('http://localhost:3000/app');
    expect(consoleUrl('http://[::1]:3000')).toBe('http://[::1]:3000/app');

    const response = await call({ baseUrl: `http://127.0.0.1:${port}` }, '/v1/qr/qr?data=https%3A%2F%2Fexample.com', { key });
    expect(response.status).toBe(200);
    expect(scanSvg(response.text)).toBe('https://example.com');
  }, 40_000);
});

describe('npm run start:gateway (distributed mode)', () => {
  const prefix = uniquePrefix('start-gateway');
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child !== undefined) await stopProcessTree(child);
    await dropPrefix(testRedisUrl(), prefix);
  });

  it('prints the console address as `npm start` does', async () => {
    expect(scripts['start:gateway']).toBe('node --import tsx services/gateway/src/main.ts');
    const port = await freePort();
    child = spawnNode('services/gateway/src/main.ts', {
      env: childEnv({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }),
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // No key is made here (keys come from `npm run keys`), so no sign-in hint either.
    await expect.poll(() => output, { timeout: 30_000, interval: 100 }).toContain(`Web console: http://127.0.0.1:${port}/app\n`);
    expect(output).not.toContain('sign in with the key above');
  }, 40_000);
});

describe('npm run keys (distributed mode)', () => {
  const prefix = uniquePrefix('keys-cli');
  const env = () => childEnv({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix });
  const keys = (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'services/gateway/src/keys-cli.ts', ...args], { env: env(), timeout: 20_000 });
  afterAll(async () => dropPrefix(testRedisUrl(), prefix));

  it('creates a key shown once, lists it without the key, applies overrides, and revokes it', async () => {
    const created = await keys('create', '--name', 'acme', '--free', 'qr.generate=1');
    const key = /sk_[A-Za-z0-9]{32}/.exec(created.stdout)?.[0];
    expect(key).toBeDefined();

    const listed = await keys('list');
    expect(listed.stdout).toContain('acme');
    expect(listed.stdout).toContain('"qr.generate":1');
    expect(listed.stdout).not.toContain(key!);

    const server = await startServer('distributed', { prefix });
    try {
      const first = await call(server, '/v1/qr/qr?data=x', { key });
      expect(first.headers.get('x-service-free-remaining')).toBe('0');
      expect((await call(server, '/v1/qr/qr?data=x', { key })).headers.get('x-service-cost')).toBe('0.0005');

      await keys('revoke', 'acme');
      expect((await keys('list')).stdout).toContain('REVOKED');
      const revoked = await call(server, '/v1/qr/qr?data=x', { key });
      expect(revoked.status).toBe(401);
      expect(revoked.headers.get('www-authenticate')).toContain('invalid_token');
    } finally {
      await server.close();
    }
  }, 60_000);

  it('fails with a usage message on a bad command', async () => {
    await expect(keys('frobnicate')).rejects.toMatchObject({ stderr: expect.stringContaining('usage: npm run keys') });
  });
});
