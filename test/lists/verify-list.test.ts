/**
 * `verify-list`, the command-line client, end to end: the client's bin as a process of its own
 * against the product as real processes (embedded mode, and distributed mode for a gateway
 * restart) and the scripted mail world. It cleans a CSV file with its own columns, quoting, BOM
 * and separator; is interrupted with SIGINT mid-list, prints the command that resumes, and that
 * command writes the complete file without uploading again; waits out a 429's Retry-After and a
 * gateway that is down; and says the API's refusals (401, 413, 400 too_many_emails) in its terms.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { signalGroup, waitUntil } from '@svc/testkit';
import { FULL_RESULT_COLUMNS } from '@svc/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMultiRig, type ListObjectBody, type MultiRig } from './harness.ts';
import { runClient, startClient, startDistributedProduct, startEmbeddedProduct, type Product } from './products.ts';

const KNOWN = (domain: string, count: number) => Array.from({ length: count }, (_, i) => `known${i}@${domain}`);

let rig: MultiRig;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'verify-list-'));
  rig = await startMultiRig({
    'shop.test': { host: '127.0.0.71', users: KNOWN('shop.test', 50) },
    // One RCPT at a time, 8 ms each: a chunk of 100 takes about a second, so a list of 300 runs for seconds.
    'crm.test': { host: '127.0.0.72', users: KNOWN('crm.test', 300), pipelining: false, replyDelayMs: 8 },
  });
});
afterAll(async () => {
  await rig?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const PRODUCT_ENV = () => ({
  ...rig.env,
  LIST_RETRY_DELAYS_S: '',
  VERIFY_RESULT_CACHE_TTL_S: '0',
  // Creations per key: one per 3-second window, so that a client meets a 429 and must wait its Retry-After.
  RATE_LIMIT_EMAIL_VERIFY_LIST: '1',
  RATE_LIMIT_WINDOW_MS: '3000',
});

interface Expected {
  cells: string[];
  verdict: string;
}

/** A CSV file as people have them: BOM, `;`, a quoted field with the separator and a line break, duplicates, a malformed address. */
function contactsFile(domain: string, distinct: number): { text: string; header: string[]; rows: Expected[] } {
  const header = ['Name', 'E-Mail', 'Notes'];
  const rows: Expected[] = [];
  for (let i = 0; i < distinct; i += 1) {
    const known = i % 2 === 0;
    const address = known ? `known${i / 2}@${domain}` : `gone${i}@${domain}`;
    rows.push({
      cells: [`Person ${i}`, address, i % 7 === 0 ? 'met; at "the fair"\nfollow up' : `note ${i}`],
      verdict: known ? 'deliverable' : 'undeliverable',
    });
  }
  rows.push({ cells: ['Twice', `known0@${domain.toUpperCase()}`, 'a duplicate, the domain in capitals'], verdict: 'deliverable' });
  rows.push({ cells: ['Broken', 'not-an-address', ''], verdict: 'undeliverable' });
  const quote = (cell: string) => (/[;"\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);
  const text = `\uFEFF${[header, ...rows.map((row) => row.cells)].map((cells) => cells.map(quote).join(';')).join('\r\n')}\r\n`;
  return { text, header, rows };
}

/** The verified file: the input's columns and rows in order, four columns appended, each verdict as the rig says. */
async function expectVerified(path: string, file: ReturnType<typeof contactsFile>): Promise<void> {
  const raw = await readFile(path, 'utf8');
  expect(raw.startsWith('\uFEFF'), 'the byte-order mark is kept').toBe(true);
  const records: string[][] = parse(raw, { bom: true, delimiter: ';', relax_column_count: true });
  const [header, ...rows] = records;
  expect(header).toEqual([...file.header, ...FULL_RESULT_COLUMNS]); // the full form: what to do with each row
  expect(rows).toHaveLength(file.rows.length);
  rows.forEach((row, i) => {
    expect(row.slice(0, 3), `row ${i}`).toEqual(file.rows[i]!.cells);
    expect(row[3], `row ${i}: ${row[1]}`).toBe(file.rows[i]!.verdict);
    expect(row[7], `row ${i}: action`).toBe(file.rows[i]!.verdict === 'deliverable' ? 'keep' : 'remove');
  });
  expect(rows.at(-2)?.[8], 'a later row of one address is flagged').toContain('duplicate');
  expect(rows.at(-1)?.[5]).toBe('invalid_syntax');
  expect(existsSync(`${path}.part`)).toBe(false);
}

async function listsOfKey(product: Product): Promise<ListObjectBody[]> {
  const response = await fetch(`${product.baseUrl}/v1/email-verify/lists?limit=100`, {
    headers: { authorization: `Bearer ${product.key}` },
  });
  return ((await response.json()) as { lists: ListObjectBody[] }).lists;
}

async function getList(product: Product, id: string): Promise<ListObjectBody> {
  const response = await fetch(`${product.baseUrl}/v1/email-verify/lists/${id}`, { headers: { authorization: `Bearer ${product.key}` } });
  return (await response.json()) as ListObjectBody;
}

const clientEnv = (product: Product) => ({ VERIFY_API_URL: product.baseUrl, VERIFY_API_KEY: product.key });

describe('verify-list against the product in embedded mode', () => {
  let product: Product;
  beforeAll(async () => {
    product = await startEmbeddedProduct(PRODUCT_ENV());
  });
  afterAll(async () => product?.close());

  it('runs from the checkout as `npx verify-list`', async () => {
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'verify-list', '--help'], { timeout: 30_000 });
    expect(stdout).toContain('Usage: verify-list <file.csv>');
  });

  it('cleans a CSV file: progress while it runs, contacts.verified.csv beside it with every row in order', async () => {
    const file = contactsFile('shop.test', 60);
    const input = join(dir, 'contacts.csv');
    await writeFile(input, file.text);
    const { code, stdout, stderr } = await runClient([input, '--interval', '0.2'], clientEnv(product));
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/list lst_[0-9a-f]{24} created: 62 entries, 61 distinct addresses/);
    expect(stderr).toMatch(/\d+\/62 \d+%/);
    expect(stdout).toContain('62 of 62 entries verified (61 distinct addresses): 31 deliverable, 0 risky, 31 undeliverable');
    expect(stdout).toContain(`Wrote ${join(dir, 'contacts.verified.csv')}.`);
    expect(stdout + stderr).not.toContain(product.key);
    await expectVerified(join(dir, 'contacts.verified.csv'), file);
    const [list] = await listsOfKey(product);
    expect(list).toMatchObject({ name: 'contacts.csv', status: 'completed', count: 62 });
  });

  it('stops at Ctrl-C mid-list, prints how to resume; the resume writes the complete file without a second upload', async () => {
    const file = contactsFile('crm.test', 300);
    const input = join(dir, 'crm export.csv');
    await writeFile(input, file.text);
    const before = (await listsOfKey(product)).length;
    const client = startClient([input, '--interval', '0.2'], clientEnv(product));
    await expect.poll(() => /list (lst_[0-9a-f]{24}) created/.exec(client.stderr())?.[1], { timeout: 20_000 }).toBeDefined();
    const id = /list (lst_[0-9a-f]{24}) created/.exec(client.stderr())![1]!;
    await expect.poll(async () => (await getList(product, id)).processed, { timeout: 20_000, interval: 50 }).toBeGreaterThan(0);

    signalGroup(client.child.pid!, 'SIGINT'); // what Ctrl-C does to the foreground process group
    expect(await client.exited, client.stderr()).toBe(130);
    const atInterrupt = await getList(product, id);
    expect(atInterrupt.processed, 'interrupted mid-list').toBeLessThan(atInterrupt.count);
    const resume = /resume with:\n {2}(verify-list .*)\n/.exec(client.stderr())?.[1];
    expect(resume).toBe(`verify-list --resume ${id} '${input}'`);
    expect(existsSync(join(dir, 'crm export.verified.csv'))).toBe(false);

    // The printed command, as a shell would split it.
    const words = [...resume!.matchAll(/'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2]!);
    expect(words[0]).toBe('verify-list');
    const resumed = await runClient([...words.slice(1), '--interval', '0.2'], clientEnv(product));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`resuming list ${id}`);
    expect(resumed.stdout).toContain('302 of 302 entries verified (301 distinct addresses): 151 deliverable, 0 risky, 151 undeliverable');
    await expectVerified(join(dir, 'crm export.verified.csv'), file);
    expect((await listsOfKey(product)).length, 'the resume uploaded nothing').toBe(before + 1);
  }, 60_000);

  it("honours a 429's Retry-After: waits, then creates the list", async () => {
    // Use up a fresh window's one creation, then start the client at once. A window an earlier
    // test opened may be about to end: a creation taken there could leave the client the next
    // window's, and no 429 to honour. So the creation is retried until one is taken (202), which
    // opens a window of its own.
    const take = () =>
      fetch(`${product.baseUrl}/v1/email-verify/lists`, {
        method: 'POST',
        headers: { authorization: `Bearer ${product.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ emails: ['known1@shop.test'] }),
      });
    await waitUntil(async () => (await take()).status === 202, 10_000, 'a list creation to be taken');
    const input = join(dir, 'later.csv');
    await writeFile(input, 'email\nknown2@shop.test\ngone@shop.test\n');
    const { code, stdout, stderr } = await runClient([input, '--interval', '0.2'], clientEnv(product));
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/429 rate_limited: .*; trying again in \d\.\d s/);
    expect(stdout).toContain('2 of 2 entries verified');
    expect(await readFile(join(dir, 'later.verified.csv'), 'utf8')).toBe(
      '\ufeffemail,verdict,score,reason,did_you_mean,action,flags,provider,probability\nknown2@shop.test,deliverable,95,accepted_email,,keep,,,\ngone@shop.test,undeliverable,5,rejected_email,,remove,,,\n',
    );
  });

  it("says the API's refusals in its terms: 401, 413 file too large, 400 too many addresses; no key is a usage error", async () => {
    const input = join(dir, 'small.csv');
    await writeFile(input, 'email\nknown1@shop.test\n');
    const wrongKey = 'sk_0123456789abcdefghijABCDEFGHIJ01';
    const refused = await runClient([input], { VERIFY_API_URL: product.baseUrl, VERIFY_API_KEY: wrongKey });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the API refused the key (401 unauthorized:');
    expect(refused.stderr).toContain('Set VERIFY_API_KEY (or --key)');
    expect(refused.stderr + refused.stdout).not.toContain(wrongKey);

    const huge = join(dir, 'huge.csv');
    await writeFile(huge, `email\n${'x'.repeat(17 * 1024 * 1024)}\n`);
    const tooLarge = await runClient([huge], clientEnv(product));
    expect(tooLarge.code).toBe(1);
    expect(tooLarge.stderr).toContain(
      `${huge} is 17.0 MiB: too large for one list (413 payload_too_large: A list upload may be at most 16 MiB.)`,
    );

    const many = join(dir, 'many.csv');
    await writeFile(many, `email\n${Array.from({ length: 100_001 }, (_, i) => `a${i}@shop.test`).join('\n')}\n`);
    const tooMany = await runClient([many], clientEnv(product));
    expect(tooMany.code).toBe(1);
    expect(tooMany.stderr).toContain(
      `${many} holds more addresses than one list takes (400 too_many_emails: A list may contain at most 100000 addresses.)`,
    );

    const noKey = await runClient([input], { VERIFY_API_URL: product.baseUrl, VERIFY_API_KEY: '' });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('no API key: set VERIFY_API_KEY');
    expect(existsSync(join(dir, 'small.verified.csv'))).toBe(false);
  }, 60_000);
});

describe('verify-list against the product in distributed mode', () => {
  let product: Product;
  beforeAll(async () => {
    product = await startDistributedProduct(PRODUCT_ENV());
  });
  afterAll(async () => product?.close());

  it('rides out a gateway restart while it polls: backs off, then writes the complete file', async () => {
    const file = contactsFile('crm.test', 400);
    const input = join(dir, 'restart.csv');
    await writeFile(input, file.text);
    const client = startClient([input, '--interval', '0.2'], clientEnv(product));
    await expect.poll(() => client.stderr(), { timeout: 20_000 }).toMatch(/list lst_[0-9a-f]{24} created/);
    await product.stopGateway();
    await expect.poll(() => client.stderr(), { timeout: 10_000 }).toMatch(/cannot reach .* \(ECONNREFUSED\); trying again in/);
    await product.startGateway();
    expect(await client.exited, client.stderr()).toBe(0);
    expect(client.stdout()).toContain('402 of 402 entries verified');
    await expectVerified(join(dir, 'restart.verified.csv'), file);
  }, 60_000);
});
