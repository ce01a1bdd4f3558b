/**
 * Reading uploads: the delimiter and the address column as docs/lists.md describes them, RFC 4180
 * quoting across chunk boundaries, the byte-order mark, the size limit while streaming, and the
 * one dedup rule shared with the verifier.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { detectDelimiter, headerOf, readCsvUpload } from '../../src/lists/csv-upload.ts';

/** The body arriving in small pieces, as over a slow connection. */
const body = (text: string | Buffer, piece = 7) => {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  return Readable.from(Array.from({ length: Math.ceil(bytes.length / piece) }, (_, i) => bytes.subarray(i * piece, (i + 1) * piece)));
};

async function read(text: string | Buffer, limit?: number, column?: string) {
  const upload = await readCsvUpload(body(text), limit, column);
  const rows: string[][] = [];
  for await (const row of upload.rows) rows.push(row);
  return { layout: upload.layout, rows };
}

describe('CSV uploads', () => {
  it('detects `,` or `;` from the first record: blank lines skipped, quoted line breaks kept', () => {
    expect(detectDelimiter('name,email,note')).toBe(',');
    expect(detectDelimiter('name;email;note')).toBe(';');
    expect(detectDelimiter('"Doe, Jane";email')).toBe(';');
    expect(detectDelimiter('email')).toBe(',');
    expect(detectDelimiter('\n\r\nname;email\nAnn;a@x.test')).toBe(';');
    expect(detectDelimiter('"na\nme";email;x\nAnn;a@x.test;1')).toBe(';');
  });

  it('reads a file whose line ends are mixed, after leading blank lines', async () => {
    const { layout, rows } = await read('\n\r\nname;email\nAnn;a@x.test\r\nBob;"b@x.test"\rCy;c@x.test\n');
    expect(layout).toMatchObject({ columns: ['name', 'email'], addressColumn: 1, delimiter: ';' });
    expect(rows).toEqual([
      ['Ann', 'a@x.test'],
      ['Bob', 'b@x.test'],
      ['Cy', 'c@x.test'],
    ]);
  });

  it('takes the separator from an Excel `sep=` first line, and skips that line', async () => {
    const { layout, rows } = await read('\ufeffsep=;\r\nname;email\r\nAnn, Lee;a@x.test\r\n');
    expect(layout).toMatchObject({ columns: ['name', 'email'], addressColumn: 1, delimiter: ';' });
    expect(rows).toEqual([['Ann, Lee', 'a@x.test']]);
  });

  it('takes `?column=` by 1-based index or by header (any case), and refuses a column the file does not have', async () => {
    const text = 'Name,Work,Private\nAnn,a@x.test,ann@home.test\n';
    expect((await read(text, undefined, '3')).layout.addressColumn).toBe(2);
    expect((await read(text, undefined, ' PRIVATE ')).layout.addressColumn).toBe(2);
    for (const column of ['4', '0', 'Phone'])
      await expect(read(text, undefined, column), column).rejects.toMatchObject({
        code: 'invalid_parameter',
        details: { param: 'column' },
      });
  });

  it('knows the address column by the names contact exports give it', () => {
    for (const header of ['Email Address', 'E-mail Address', 'E-mail 1 - Value', 'email_address', 'E-Mail', 'MAIL'])
      expect(headerOf(['Name', header]), header).toEqual({ header: true, addressColumn: 1 });
    expect(headerOf(['Name', 'Email Type'])).toEqual({ header: true, addressColumn: 0 });
  });

  it('reads UTF-16 with a byte-order mark as text; refuses Latin-1, invalid UTF-8 and NUL bytes, saying so', async () => {
    const utf16 = (text: string, bigEndian: boolean) => {
      const le = Buffer.from(`\ufeff${text}`, 'utf16le');
      return bigEndian ? Buffer.from(le).swap16() : le;
    };
    for (const bigEndian of [false, true]) {
      const { layout, rows } = await read(utf16('name;email\nMüller;m@x.test\n', bigEndian));
      expect(layout).toMatchObject({ delimiter: ';', addressColumn: 1 });
      expect(rows).toEqual([['Müller', 'm@x.test']]);
    }
    await expect(read(Buffer.from('name,email\nM\xfcller,m@x.test\n', 'latin1'))).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/is not UTF-8: a byte sequence near byte \d+ is not UTF-8 \(Latin-1/),
    });
    await expect(read(Buffer.from('email\na@x.test\n', 'utf16le'))).rejects.toMatchObject({
      message: expect.stringContaining('NUL byte'),
    });
    await expect(read(Buffer.concat([Buffer.from('email\na@x.test\n'), Buffer.from([0xe2, 0x82])]))).rejects.toMatchObject({
      message: expect.stringContaining('ends inside a character'),
    });
  });

  it('finds the address column by its header in any case, else the first; a first row with an @ is data', () => {
    expect(headerOf(['Name', ' E-MAIL ', 'x'])).toEqual({ header: true, addressColumn: 1 });
    expect(headerOf(['Address', 'email'])).toEqual({ header: true, addressColumn: 0 });
    expect(headerOf(['id', 'contact'])).toEqual({ header: true, addressColumn: 0 });
    expect(headerOf(['ann@x.test', 'Ann'])).toEqual({ header: false, addressColumn: 0 });
  });

  it('reads quoted fields across chunk boundaries, a BOM, CRLF and blank lines', async () => {
    const text = '\ufeffid;Mail;note\r\n1;"a@x.test";"said ""hi""; twice"\r\n\r\n2;b@x.test;"two\r\nlines"\r\n3;c@x.test\r\n';
    const { layout, rows } = await read(text);
    expect(layout).toEqual({ columns: ['id', 'Mail', 'note'], addressColumn: 1, delimiter: ';', bom: true });
    expect(rows).toEqual([
      ['1', 'a@x.test', 'said "hi"; twice'],
      ['2', 'b@x.test', 'two\r\nlines'],
      ['3', 'c@x.test'],
    ]);
  });

  it('takes a bare list of addresses without a header', async () => {
    const { layout, rows } = await read('a@x.test\nb@x.test');
    expect(layout).toMatchObject({ columns: ['email'], addressColumn: 0, bom: false });
    expect(rows).toEqual([['a@x.test'], ['b@x.test']]);
  });

  it('stops reading past the size limit with payload_too_large', async () => {
    await expect(read(`email\n${'a@x.test\n'.repeat(100)}`, 300)).rejects.toMatchObject({ code: 'payload_too_large' });
  });

  it('answers a malformed file with invalid_request naming the line', async () => {
    await expect(read('email\nok@x.test\n"open@x.test\n')).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('quoted field is not closed'),
    });
  });
});
