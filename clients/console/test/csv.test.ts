/**
 * The console's reading of a file before anything is sent: the exports people have (a CRM's
 * `Work Email`, Outlook's `E-mail Address`, a German `E-Mail-Adresse`, a `Contact` column found by
 * its content, Excel's Windows-1252 CSV and UTF-16 "Unicode text"), the distinct count and price,
 * files refused with what to do, and the results cut by verdict.
 */
import { describe, expect, it } from 'vitest';
import { countAddresses, filterResults, priceOf, readCsvFile } from '../src/csv.ts';

const file = (content: string | Uint8Array, name = 'export.csv') => new File([content], name, { type: 'text/csv' });
const detected = async (content: string | Uint8Array) => {
  const read = await readCsvFile(file(content));
  return { column: read.columns[read.detected.index], by: read.detected.by, encoding: read.encoding };
};

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

  it('counts distinct addresses by the service’s rule (domain in any case) and prices per started 100', () => {
    const rows = [['ann@x.test'], ['ann@X.TEST'], ['Ann@x.test'], [''], ['not-an-address']];
    expect(countAddresses(rows, 0)).toEqual({ addresses: 4, distinct: 3, wellFormed: 3 });
    expect([0, 1, 100, 101, 240].map(priceOf)).toEqual(['$0.00', '$0.15', '$0.15', '$0.30', '$0.45']);
  });

  it('cuts the results CSV to one verdict, keeping its separator and byte-order mark', () => {
    const csv =
      '\ufeffName;email;verdict;score;reason;did_you_mean\r\nAnn;a@x.test;deliverable;0.9;ok;\r\nBob;b@x.test;risky;0.5;catch_all;\r\n';
    expect(filterResults(csv, 'risky')).toBe('\ufeffName;email;verdict;score;reason;did_you_mean\r\nBob;b@x.test;risky;0.5;catch_all;\r\n');
  });
});
