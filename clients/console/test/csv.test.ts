/**
 * The console's reading of a file before anything is sent: the exports people have (a CRM's
 * `Work Email`, Outlook's `E-mail Address`, a German `E-Mail-Adresse`, a `Contact` column found by
 * its content, Excel's Windows-1252 CSV and UTF-16 "Unicode text"), the distinct count and price,
 * files refused with what to do, and the results cut by verdict. The same files go through the
 * service's own upload reader and list service: the console must mark the column the service
 * reads, and count and price the distinct addresses the service stores.
 */
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryListQueue, MemoryListStore } from '@svc/lists';
import { ListService, readCsvUpload } from '@svc/lists/service';
import { MemoryMeter, costOf, listUnits } from '@svc/metering';
import { EXPORTS } from '@svc/testkit/csv-exports';
import Papa from 'papaparse';
import { countAddresses, filterResults, priceOf, readCsvFile } from '../src/csv.ts';

const file = (content: string | Uint8Array, name = 'export.csv') => new File([content], name, { type: 'text/csv' });
const detected = async (content: string | Uint8Array) => {
  const read = await readCsvFile(file(content));
  return { column: read.columns[read.detected.index], by: read.detected.by, encoding: read.encoding };
};

const queue = new MemoryListQueue({ concurrency: 1 });
afterAll(() => queue.close());
// No processor is started: the lists are only created (read, counted, stored), never probed.
const lists = new ListService({
  store: new MemoryListStore(),
  queue,
  meter: new MemoryMeter(),
  maxActivePerKey: 1_000,
  freeAllowances: { 'email-verify.batch': 0, 'email-verify.single': 0, 'qr.generate': 0, 'qr.wifi': 0, 'email-verify.list': 0 },
  allowPrivateCallbacks: false,
});
const owner = { id: 'key_console', freeAllowance: {} };

/** What the service makes of `csv` uploaded without `?column=`: the column it reads, and the list's counts. */
async function serviceReads(csv: string): Promise<{ column: number; count: number; distinct: number }> {
  const upload = await readCsvUpload(Readable.from([Buffer.from(csv)]));
  const list = await lists.create(owner, upload, { warn: () => undefined });
  return { column: upload.layout.addressColumn, count: list.count, distinct: list.distinct };
}

/** What the console shows for `csv`: the column it marks, and the counts and price beside it. */
async function consoleReads(csv: string): Promise<{ column: number; count: number; distinct: number; price: string }> {
  const read = await readCsvFile(file(csv));
  const counted = countAddresses(read.rows, read.detected.index);
  return { column: read.detected.index, count: counted.addresses, distinct: counted.distinct, price: priceOf(counted.distinct) };
}

/** A file of `header` and five rows with an address in column `at` (one written three times, in other cases: one distinct address). */
const exportFile = (header: readonly string[], at: number): string =>
  Papa.unparse(
    [
      header,
      ...['ann@x.example', 'bob@x.example', 'ANN@x.example', 'ann@X.EXAMPLE', 'cy@y.example'].map((address) =>
        header.map((_, i) => (i === at ? address : `cell ${i}`)),
      ),
    ],
    { newline: '\r\n' },
  );

/** Files whose address column takes more than a header to find, each with the column the service reads. */
const TRICKY: Array<[what: string, csv: string, column: number]> = [
  ['a named column of yes/no beside a `Contact` of addresses', 'Email Opt-In,Contact\r\nyes,ann@x.test\r\nno,bob@x.test\r\n', 1],
  ['a postal `Address` beside a `Contact`', 'Address,Contact\r\n1 Main St,ann@x.test\r\n2 High St,bob@x.test\r\n', 1],
  ['an `Email` column empty in every row', 'Name,Email,Contact\r\nAnn,,ann@x.test\r\nBob,,bob@x.test\r\n', 2],
  ['an `Email Opt Out` before the `Email`', 'Email Opt Out,Name,Email\r\nyes,Ann,ann@x.test\r\nno,Bob,bob@x.test\r\n', 2],
  ['no header naming it', 'Name,Contact,Phone\r\nAnn,ann@x.test,1\r\nBob,bob@x.test,2\r\n', 1],
  ['no header row at all', 'Ann;ann@x.test\nBob;bob@x.test\n', 1],
  [
    "LinkedIn's note above the header row",
    'Notes:\r\n"When exporting your connection data, you may notice that some of the email addresses are missing."\r\n\r\nFirst Name,Last Name,URL,Email Address,Company\r\nAnn,Lee,https://www.linkedin.com/in/annlee,ann@x.test,Acme\r\nBob,Ray,https://www.linkedin.com/in/bobray,,Bolt\r\n',
    3,
  ],
];

describe('the console reads a file as the service does', () => {
  it.each(EXPORTS)('%s: the same column, count, distinct count and price', async (_source, header, at) => {
    const csv = exportFile(header, at);
    const service = await serviceReads(csv);
    expect(service).toEqual({ column: at, count: 5, distinct: 3 });
    expect(await consoleReads(csv)).toEqual({ ...service, price: '$0.15' });
  });

  it.each(TRICKY)('%s: the same column and counts', async (_what, csv, column) => {
    const service = await serviceReads(csv);
    expect(service.column).toBe(column);
    expect(await consoleReads(csv)).toMatchObject(service);
  });

  it('prices what the service bills: the list price per started 100 distinct addresses', async () => {
    // 101 distinct addresses, and the same ones again with the domain in capitals: still 101.
    const addresses = Array.from({ length: 101 }, (_, i) => `p${i}@x.example`);
    const csv = ['Email', ...addresses, ...addresses.map((address) => address.toUpperCase().replace('P', 'p'))].join('\r\n');
    const service = await serviceReads(csv);
    expect(service).toMatchObject({ count: 202, distinct: 101 });
    const shown = await consoleReads(csv);
    expect(shown).toMatchObject({ count: 202, distinct: 101, price: '$0.30' });
    expect(shown.price).toBe(`$${(costOf('email-verify.list', listUnits(service.distinct)) / 1_000_000).toFixed(2)}`);
  });
});

describe('reading an export in the browser', () => {
  it('finds the address column by its header, as exports name it', async () => {
    for (const header of ['Work Email', 'E-mail Address', 'E-Mail-Adresse', 'Personal email', 'EMAIL', 'mail'])
      expect(await detected(`Name,${header},Phone\r\nAnn,ann@x.test,1\r\n`), header).toEqual({
        column: header,
        by: 'header',
        encoding: 'UTF-8',
      });
  });

  it('of several columns a header names, takes the one that holds addresses', async () => {
    expect(await detected('Email Opt Out,Name,Email\r\nyes,Ann,ann@x.test\r\nno,Bob,bob@x.test\r\n')).toMatchObject({
      column: 'Email',
      by: 'header',
    });
  });

  it('passes over a named column that holds no address for one that does, as the service does', async () => {
    // `Email Opt-In` names email but holds yes/no; a postal `Address`: the service reads `Contact`.
    expect(await detected('Email Opt-In,Contact\r\nyes,ann@x.test\r\nno,bob@x.test\r\n')).toMatchObject({
      column: 'Contact',
      by: 'content',
    });
    expect(await detected('Address,Contact\r\n1 Main St,ann@x.test\r\n2 High St,bob@x.test\r\n')).toMatchObject({
      column: 'Contact',
      by: 'content',
    });
    // With no column holding an address anywhere, the named one is still the one shown.
    expect(await detected('Name,Email\r\nAnn,\r\nBob,n/a\r\n')).toMatchObject({ column: 'Email', by: 'header' });
  });

  it('finds it by content when no header names it (`Contact`), and in a file without a header row', async () => {
    expect(await detected('Name,Contact,Phone\r\nAnn,ann@x.test,1\r\nBob,bob@x.test,2\r\n')).toMatchObject({
      column: 'Contact',
      by: 'content',
    });
    const bare = await readCsvFile(file('Ann;ann@x.test\nBob;bob@x.test\n'));
    expect(bare).toMatchObject({ hasHeader: false, columns: ['Column 1', 'Column 2'], detected: { index: 1, by: 'content' } });
    expect(bare.rows).toHaveLength(2);
  });

  it('reads Excel’s Windows-1252 CSV and its UTF-16 tab-separated “Unicode text”', async () => {
    const latin = Uint8Array.from([...Buffer.from('Name;E-Mail\r\nJ'), 0xfc, ...Buffer.from('rgen;j@x.test\r\n')]);
    const read = await readCsvFile(file(latin));
    expect(read).toMatchObject({ encoding: 'Windows-1252', rows: [['Jürgen', 'j@x.test']] });
    const utf16 = Uint8Array.from(Buffer.from('\ufeffName\tEmail\r\nAnn\tann@x.test\r\n', 'utf16le'));
    expect(await detected(utf16)).toEqual({ column: 'Email', by: 'header', encoding: 'UTF-16LE' });
  });

  it('refuses, saying what to do, an empty file, a binary one, one with no addresses and one over 16 MiB', async () => {
    await expect(readCsvFile(file(''))).rejects.toThrow(/empty/);
    await expect(readCsvFile(file(Uint8Array.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 8, 0])))).rejects.toThrow(/not a text file/);
    await expect(readCsvFile(file('Name,Phone\nAnn,1\n'))).rejects.toThrow(/No column of this file holds email addresses/);
    await expect(readCsvFile(file('a'.repeat(16 * 1024 * 1024 + 1)))).rejects.toThrow(/larger than 16 MiB/);
  });

  it('counts distinct addresses by the service’s rule (the whole address in any case) and prices per started 100', () => {
    const rows = [['ann@x.test'], ['ann@X.TEST'], ['Ann@x.test'], [''], ['not-an-address']];
    expect(countAddresses(rows, 0)).toEqual({ addresses: 4, distinct: 2, wellFormed: 3 });
    expect([0, 1, 100, 101, 240].map(priceOf)).toEqual(['$0.00', '$0.15', '$0.15', '$0.30', '$0.45']);
  });

  it('cuts the results CSV to one verdict, keeping its separator and byte-order mark', () => {
    const csv =
      '\ufeffName;email;verdict;score;reason;did_you_mean\r\nAnn;a@x.test;deliverable;0.9;ok;\r\nBob;b@x.test;risky;0.5;catch_all;\r\n';
    expect(filterResults(csv, 'risky')).toBe('\ufeffName;email;verdict;score;reason;did_you_mean\r\nBob;b@x.test;risky;0.5;catch_all;\r\n');
  });
});
