/**
 * `verify-list` on a list that would wait a long time for its retries (issue 33): behind a
 * greylisting server (451 until a pair was seen 60 s before, longer than this test waits) and
 * with retries 30 s apart, the list goes `retrying`. With `--finish` the client finishes it as
 * soon as it retries; run in a terminal (a pseudo-terminal made by util-linux `script`) without
 * the flag, it asks whether to finish, and answering `y` finishes it. Either way the client
 * exits 0 within seconds, the file holds every row, the greylisted ones `risky` / `greylisted` /
 * `review`. The client's bin and the product (embedded mode) are real processes.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { childEnv, spawnCommand, stopProcessTree } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMultiRig, type MultiRig } from './harness.ts';
import { CLIENT_BIN, runClient, startEmbeddedProduct, type Product } from './products.ts';

let rig: MultiRig;
let product: Product;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'verify-list-finish-'));
  rig = await startMultiRig({
    'greyday.test': { host: '127.0.0.56', users: ['ann@greyday.test', 'cy@greyday.test'], greylist: { minDelayMs: 60_000 } },
    'openday.test': { host: '127.0.0.57', users: ['bob@openday.test', 'dee@openday.test'] },
  });
  product = await startEmbeddedProduct({
    ...rig.env,
    LIST_RETRY_DELAYS_S: '30,30',
    VERIFY_RESULT_CACHE_TTL_S: '0',
    VERIFY_BATCH_DEADLINE_MS: '5000',
  });
}, 60_000);
afterAll(async () => {
  await product?.close();
  await rig?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const ROWS = [
  ['Ann', 'ann@greyday.test'],
  ['Bob', 'bob@openday.test'],
  ['Cy', 'cy@greyday.test'],
  ['Dee', 'dee@openday.test'],
  ['Nobody', 'nobody@openday.test'],
];
/** Name, Email, then verdict, reason and action of the full form, as the rig answers (the greylisted ones finished). */
const EXPECTED = [
  ['Ann', 'ann@greyday.test', 'risky', 'greylisted', 'review'],
  ['Bob', 'bob@openday.test', 'deliverable', 'accepted_email', 'keep'],
  ['Cy', 'cy@greyday.test', 'risky', 'greylisted', 'review'],
  ['Dee', 'dee@openday.test', 'deliverable', 'accepted_email', 'keep'],
  ['Nobody', 'nobody@openday.test', 'undeliverable', 'rejected_email', 'remove'],
];

async function inputFile(name: string): Promise<string> {
  const path = join(dir, `${name}.csv`);
  await writeFile(path, `Name,Email\r\n${ROWS.map((row) => row.join(',')).join('\r\n')}\r\n`);
  return path;
}

async function expectFinishedFile(path: string): Promise<void> {
  const records: string[][] = parse(await readFile(path, 'utf8'), { bom: true });
  const [header, ...rows] = records;
  expect(header?.slice(0, 7)).toEqual(['Name', 'Email', 'verdict', 'score', 'reason', 'did_you_mean', 'action']);
  expect(rows.map((row) => [row[0], row[1], row[2], row[4], row[6]])).toEqual(EXPECTED);
}

const clientEnv = () => ({ VERIFY_API_URL: product.baseUrl, VERIFY_API_KEY: product.key });
const SUMMARY = '5 of 5 entries verified (5 distinct addresses): 2 deliverable, 2 risky, 1 undeliverable';

describe('verify-list finishes a list that waits for retries', () => {
  it('--finish: finishes as soon as the list retries, says so, exits 0 with the whole file', async () => {
    const input = await inputFile('flagged');
    const started = Date.now();
    const { code, stdout, stderr } = await runClient([input, '--finish', '--interval', '0.2'], clientEnv());
    expect(code, stderr).toBe(0);
    // Well before the first retry (30 s): the client did not wait for it.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(stderr).toContain('finishing: the 2 waiting entries are written as risky');
    expect(stdout).toContain(SUMMARY);
    await expectFinishedFile(join(dir, 'flagged.verified.csv'));
  }, 40_000);

  it('in a terminal without --finish: asks once the list retries, and `y` finishes it', async () => {
    const input = await inputFile('asked');
    const command = [process.execPath, CLIENT_BIN, input, '--interval', '0.2']
      .map((part) => `'${part.replaceAll("'", `'\\''`)}'`)
      .join(' ');
    // `script` runs the client on a pseudo-terminal (its stdin and stderr are TTYs) and passes our writes to it as typing; -e: its exit code.
    const terminal: ChildProcess = spawnCommand('script', ['-q', '-e', '-c', command, '/dev/null'], {
      env: childEnv({ ...clientEnv(), TERM: 'dumb' }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    terminal.stdout?.on('data', (chunk: Buffer) => void (screen += chunk.toString()));
    terminal.stderr?.on('data', (chunk: Buffer) => void (screen += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => terminal.once('close', (code: number | null) => resolve(code)));
    try {
      const started = Date.now();
      await expect
        .poll(() => screen, { timeout: 20_000, interval: 100 })
        .toContain('2 entries wait for a retry. Finish now and write them as risky? [y/N]');
      terminal.stdin?.write('y\r');
      expect(await exited, screen).toBe(0);
      expect(Date.now() - started).toBeLessThan(25_000);
      expect(screen).toContain('finishing: the 2 waiting entries are written as risky');
      expect(screen).toContain(SUMMARY);
      await expectFinishedFile(join(dir, 'asked.verified.csv'));
    } finally {
      terminal.stdin?.end();
      await stopProcessTree(terminal);
    }
  }, 40_000);
});
