/**
 * The live /openapi.json passes Redocly CLI's recommended ruleset with no error, and with no
 * warning but the ones accepted below (each with the reason it stays).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../support/servers.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const REDOCLY = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

/** The product has no licence to name yet (a private service), so `info.license` stays out. */
const ACCEPTED_WARNINGS = ['info-license'];

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: Array<{ ruleId: string; severity: 'error' | 'warn'; message: string; location: Array<{ pointer: string }> }>;
}

async function lint(file: string): Promise<LintReport> {
  const args = [REDOCLY, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'];
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  // Redocly exits 1 when it finds errors; its report is on stdout either way.
  const { stdout } = await promisify(execFile)(process.execPath, args, { env, timeout: 60_000 }).catch((error: { stdout?: string }) => ({
    stdout: error.stdout ?? '',
  }));
  return JSON.parse(stdout) as LintReport;
}

describe('Redocly lint of /openapi.json', () => {
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    server = await startServer('embedded');
    dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('has no error and only the accepted warnings', async () => {
    const file = join(dir, 'openapi.json');
    await writeFile(file, (await call(server, '/openapi.json')).text);
    const report = await lint(file);
    const found = report.problems.map(
      (problem) => `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`,
    );
    console.log(`redocly: ${report.totals.errors} errors, ${report.totals.warnings} warnings\n${found.join('\n')}`);
    expect(report.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    expect(report.problems.filter((problem) => !ACCEPTED_WARNINGS.includes(problem.ruleId))).toEqual([]);
  });

  it('catches a broken document (the lint can fail)', async () => {
    const file = join(dir, 'broken.json');
    const document = (await call(server, '/openapi.json')).json() as { paths: Record<string, Record<string, { operationId?: string }>> };
    document.paths['/v1/qr/wifi']!.get!.operationId = 'generateQrCode';
    await writeFile(file, JSON.stringify(document));
    const report = await lint(file);
    expect(report.problems.map((problem) => `${problem.severity} ${problem.ruleId}`)).toContain('error operation-operationId-unique');
  });
});
