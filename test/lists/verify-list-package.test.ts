/**
 * `verify-list` outside this repository: the client packed as users get it (`npm pack` builds its
 * JavaScript into the tarball), installed into an empty folder with the registry out of reach (it
 * has no dependencies), and run there against the product as a real process. It uploads a German
 * Excel export (Windows-1252, `;`, `E-Mail-Adresse`), prints the column and encoding the service
 * read, takes `--column`, and writes the verified file in UTF-8.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { childEnv, spawnCommand } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORTS, EXPORT_DOMAIN, EXPORT_USERS } from './exports.ts';
import { startMultiRig, type MultiRig } from './harness.ts';
import { startEmbeddedProduct, type Product } from './products.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const GERMAN = EXPORTS.find((file) => file.encoding === 'windows-1252' && file.delimiter === ';')!;

let rig: MultiRig;
let product: Product;
let dir: string;
/** The empty folder the tarball is installed into, and its bin. */
let installed: string;
let bin: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'verify-list-package-'));
  rig = await startMultiRig({ [EXPORT_DOMAIN]: { host: '127.0.0.84', users: EXPORT_USERS } });
  product = await startEmbeddedProduct({ ...rig.env, LIST_RETRY_DELAYS_S: '', VERIFY_RESULT_CACHE_TTL_S: '0' });
  // As the README says: pack from the checkout, install the tarball where nothing else is.
  await run('npm', ['pack', '-w', 'clients/verify-list', '--pack-destination', dir], { cwd: ROOT, timeout: 120_000 });
  const [tarball] = (await readdir(dir)).filter((name) => name.endsWith('.tgz'));
  installed = join(dir, 'elsewhere');
  await mkdir(installed);
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir, tarball!)], {
    cwd: installed,
    timeout: 120_000,
    // Offline and with an unreachable registry: a dependency to fetch would fail the install.
    env: { ...childEnv({}), npm_config_registry: 'http://127.0.0.1:9/' },
  });
  bin = join(installed, 'node_modules', '.bin', 'verify-list');
}, 180_000);
afterAll(async () => {
  await product?.close();
  await rig?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** The installed bin as a process of its own, from the install folder. */
async function client(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnCommand(bin, args, {
    cwd: installed,
    env: childEnv({ VERIFY_API_URL: product.baseUrl, VERIFY_API_KEY: product.key }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

describe('verify-list installed from its packed tarball', () => {
  it('is a package of ours with the bundled client only: no dependency, no source, no workspace', async () => {
    const manifest = JSON.parse(await readFile(join(installed, 'node_modules', '@email-qr', 'verify-list', 'package.json'), 'utf8')) as {
      name: string;
      dependencies?: unknown;
    };
    expect(manifest.name).toBe('@email-qr/verify-list');
    expect(manifest.dependencies).toBeUndefined();
    const files = await readdir(join(installed, 'node_modules', '@email-qr', 'verify-list', 'dist'));
    // One module: the client and the shared rules it uses (the waiting sentences) bundled in.
    expect(files).toEqual(['main.js']);
    expect(await readdir(join(installed, 'node_modules'))).toEqual(['.bin', '.package-lock.json', '@email-qr']);
    const help = await client(['--help']);
    expect(help.stdout).toContain('--column <column>');
  });

  it('cleans a German Excel export: says which column and encoding were read; the verified file is UTF-8', async () => {
    const input = join(installed, 'Kontakte.csv');
    await writeFile(input, GERMAN.bytes);
    const { code, stdout, stderr } = await client([input, '--interval', '0.2']);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('addresses read from column 3, "E-Mail-Adresse"; file read as windows-1252');
    expect(stdout).toContain('2 of 2 entries verified (2 distinct addresses): 1 deliverable, 0 risky, 1 undeliverable');
    const raw = await readFile(join(installed, 'Kontakte.verified.csv'), 'utf8');
    expect(raw.startsWith('\uFEFF'), 'a byte-order mark, so that Excel reads the UTF-8 as such').toBe(true);
    const records: string[][] = parse(raw, { bom: true, delimiter: ';' });
    const [header, ...rows] = records;
    expect(header).toEqual([
      ...GERMAN.rows[0]!,
      'verdict',
      'score',
      'reason',
      'did_you_mean',
      'action',
      'flags',
      'provider',
      'probability',
    ]);
    expect(rows.map((row) => [row[0], row[2], row[4]])).toEqual([
      ['Jürgen', 'jurgen@crm.test', 'deliverable'],
      ['Änne', '', ''],
      ['Ömer', 'oemer@crm.test', 'undeliverable'],
    ]);
  });

  it('takes --column by header or number, and says when the file has no such column', async () => {
    const input = join(installed, 'two-columns.csv');
    await writeFile(input, 'Name,Email,Backup\nAnn,gone@crm.test,ann@crm.test\n');
    const byName = await client([input, '--column', 'backup', '--interval', '0.2']);
    expect(byName.code, byName.stderr).toBe(0);
    expect(byName.stderr).toContain('addresses read from column 3, "Backup"; file read as utf-8');
    expect(byName.stdout).toContain('1 deliverable');
    const byNumber = await client([input, '--column', '2', '--interval', '0.2']);
    expect(byNumber.stderr).toContain('addresses read from column 2, "Email"');
    expect(byNumber.stdout).toContain('1 undeliverable');
    const missing = await client([input, '--column', 'Phone']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/400 invalid_parameter: No column is headed "Phone".* Check --column\./);
    const none = join(installed, 'no-addresses.csv');
    await writeFile(none, 'Name,Phone\nAnn,+1 555 0100\n');
    const refused = await client([none]);
    expect(refused.stderr).toMatch(
      /400 invalid_request: No column of this file holds e-mail addresses.* Pass --column <header or number>\./,
    );
  });
});
