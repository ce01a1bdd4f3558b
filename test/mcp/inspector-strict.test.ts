/**
 * The MCP Inspector's CLI (a real client of the field, dev dependency) lists both tool servers in
 * its strict mode, which reports every tool-schema portability problem (type arrays, ...) on
 * stderr as a `Warning:` block: none on either server. Before portable schemas it counted 25 on
 * email-verify (nullable fields written as `["boolean","null"]`).
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type TestServer } from '../support/servers.ts';

const run = promisify(execFile);
const INSPECTOR = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json')),
  'clients',
  'launcher',
  'build',
  'index.js',
);

let server: TestServer;
beforeAll(async () => {
  server = await startServer('embedded');
});
afterAll(async () => server?.close());

it.each(['email-verify', 'qr'] as const)(
  '%s: inspector --cli --strict tools/list reports no warning',
  { timeout: 60_000 },
  async (name) => {
    const { stdout, stderr } = await run(
      process.execPath,
      [
        INSPECTOR,
        '--cli',
        '--strict',
        '--method',
        'tools/list',
        '--transport',
        'http',
        '--server-url',
        `${server.baseUrl}/api/mcp/${name}`,
        '--header',
        `Authorization: Bearer ${server.key}`,
      ],
      { timeout: 50_000, env: { ...process.env, HOME: process.env.HOME ?? '/tmp' } },
    );
    const tools = (JSON.parse(stdout) as { tools: unknown[] }).tools;
    expect(tools.length).toBe(name === 'qr' ? 2 : 7);
    expect(stderr.match(/^Warning:/gm) ?? [], stderr).toHaveLength(0);
  },
);
