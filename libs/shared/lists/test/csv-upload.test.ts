/**
 * Reading uploads: the delimiter and the address column as docs/lists.md describes them, RFC 4180
 * quoting across chunk boundaries, the byte-order mark, the size limit while streaming, and the
 * one dedup rule shared with the verifier.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chooseColumn } from '../src/csv-columns.ts';
import { detectDelimiter, readCsvUpload, type CsvUploadOptions } from '../src/csv-upload.ts';

/** The body arriving in small pieces, as over a slow connection. */
const body = (text: string | Buffer, piece = 7) => {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  return Readable.from(Array.from({ length: Math.ceil(bytes.length / piece) }, (_, i) => bytes.subarray(i * piece, (i + 1) * piece)));
};

async function read(text: string | Buffer, options: CsvUploadOptions = {}, piece?: number) {
  const upload = await readCsvUpload(body(text, piece), options);
  const rows: string[][] = [];
  for await (const row of upload.rows) rows.push(row);
  return { layout: { ...upload.layout, ...upload.settle() }, rows };
}

describe('CSV uploads', () => {
  it('detects `,` or `;` from the first record: blank lines skipped, quoted line breaks kept', () => {
    expect(detectDelimiter('name,email,note')).toBe(',');
    expect(detectDelimiter('name;email;note')).toBe(';');
    expect(detectDelimiter('"Doe, Jane";email')).toBe(';');
    expect(detectDelimiter('email')).toBe(',');
    expect(detectDelimiter('\n\r\nname;email\nAnn;a@x.test')).toBe(';');
    expect(detectDelimiter('"na\nme";email;x\nAnn;a@x.test;1')).toBe(';');
    expect(detectDelimiter('Name\tE-mail, work\tNotes')).toBe('\t');
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

  it('knows the address column by the names contact exports give it', () => {
    for (const header of ['Email Address', 'E-mail Address', 'E-mail 1 - Value', 'email_address', 'E-Mail', 'MAIL', 'Work Email'])
      expect(chooseColumn(['Name', header], []), header).toMatchObject({ header: true, index: 1 });
    expect(() => chooseColumn(['Name', 'Email Type'], [['Ann', 'Internet']])).toThrow(/No column of this file holds e-mail addresses/);
  });

  it('reads UTF-16 with a byte-order mark as text; Latin-1 as Windows-1252; refuses NUL bytes and a cut character, saying where', async () => {
    const utf16 = (text: string, bigEndian: boolean) => {
      const le = Buffer.from(`\ufeff${text}`, 'utf16le');
      return bigEndian ? Buffer.from(le).swap16() : le;
    };
    for (const bigEndian of [false, true]) {
      const { layout, rows } = await read(utf16('name;email\nMüller;m@x.test\n', bigEndian));
      expect(layout).toMatchObject({ delimiter: ';', addressColumn: 1, encoding: bigEndian ? 'utf-16be' : 'utf-16le', bom: true });
      expect(rows).toEqual([['Müller', 'm@x.test']]);
    }
    const latin1 = await read(Buffer.from('name,email\nM\xfcller,m@x.test\n', 'latin1'));
    expect(latin1.layout).toMatchObject({ encoding: 'windows-1252', bom: true });
    expect(latin1.rows).toEqual([['Müller', 'm@x.test']]);
    await expect(read(Buffer.from('email\na@x.test\n', 'utf16le'))).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(
        /holds NUL bytes between its letters at line 1, byte 2\. It looks like UTF-16 without a byte-order mark/,
      ),
      details: { line: 1, byte: 2 },
    });
    // Cut inside a character: UTF-8 (a byte-order mark said so) refused where the character starts.
    const cut = Buffer.concat([Buffer.from('\ufeffemail\na@x.test\n'), Buffer.from([0xe2, 0x82])]);
    await expect(read(cut)).rejects.toMatchObject({ message: expect.stringContaining('ends inside a character at line 3, byte 19') });
  });

  it('finds the address column by its header in any case; a first row with an @ is data', () => {
    expect(chooseColumn(['Name', ' E-MAIL ', 'x'], [])).toMatchObject({ header: true, index: 1 });
    expect(chooseColumn(['Address', 'email'], [])).toMatchObject({ header: true, index: 1 });
    expect(chooseColumn(['id', 'contact'], [['1', 'a@x.test']])).toMatchObject({ header: true, index: 1 });
    expect(chooseColumn(['ann@x.test', 'Ann'], [])).toMatchObject({ header: false, index: 0 });
  });

  it('reads quoted fields across chunk boundaries, a BOM, CRLF and blank lines', async () => {
    const text = '\ufeffid;Mail;note\r\n1;"a@x.test";"said ""hi""; twice"\r\n\r\n2;b@x.test;"two\r\nlines"\r\n3;c@x.test\r\n';
    const { layout, rows } = await read(text);
    expect(layout).toEqual({
      columns: ['id', 'Mail', 'note'],
      addressColumn: 1,
      delimiter: ';',
      bom: true,
      headerRow: true,
      encoding: 'utf-8',
    });
    expect(rows).toEqual([
      ['1', 'a@x.test', 'said "hi"; twice'],
      ['2', 'b@x.test', 'two\r\nlines'],
      ['3', 'c@x.test'],
    ]);
  });

  it("reads LinkedIn's Connections.csv: the header below its note, the note kept as rows", async () => {
    const text =
      'Notes:\r\n"When exporting your connection data, you may notice that some of the email addresses are missing, ..."\r\n\r\n' +
      'First Name,Last Name,URL,Email Address,Company,Position,Connected On\r\n' +
      'Ann,Lee,https://www.linkedin.com/in/annlee,ann@x.test,Acme,CTO,12 Nov 2026\r\n' +
      'Bob,Ray,https://www.linkedin.com/in/bobray,,Bolt,CEO,01 Oct 2026\r\n';
    const { layout, rows } = await read(text);
    expect(layout).toMatchObject({ columns: ['First Name', 'Last Name', 'URL', 'Email Address', 'Company', 'Position', 'Connected On'] });
    expect(layout).toMatchObject({ addressColumn: 3, headerRow: true });
    expect(rows.map((row) => row[0])).toEqual(['Notes:', expect.stringContaining('When exporting'), 'Ann', 'Bob']);
  });

  it('takes a bare list of addresses without a header', async () => {
    const { layout, rows } = await read('a@x.test\nb@x.test');
    expect(layout).toMatchObject({ columns: ['email'], addressColumn: 0, bom: false });
    expect(rows).toEqual([['a@x.test'], ['b@x.test']]);
  });

  it('stops reading past the size limit with payload_too_large', async () => {
    await expect(read(`email\n${'a@x.test\n'.repeat(100)}`, { limitBytes: 300 })).rejects.toMatchObject({ code: 'payload_too_large' });
  });

  it('answers a malformed file with invalid_request naming the line', async () => {
    await expect(read('email\nok@x.test\n"open@x.test\n')).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('quoted field that is not closed'),
    });
  });

  it('names the line and byte where an unclosed quote opened, not the end of the file', async () => {
    // Bytes counted from the start of the file, 1-based, as the encoding refusals count them.
    const file = 'Name,Email\r\n"Ann,ann@example.com\r\nBob,bob@example.com\r\n';
    await expect(read(file)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/at line 2, byte 13\./),
      details: { line: 2, byte: 13 },
    });
    // Across chunk boundaries, in a later field, after quoted line breaks and escaped quotes.
    const later = 'Name;Email\n"A\n""x""";a@x.test\nBob;"b@x.test\nCy;c@x.test\n';
    await expect(read(later, {}, 3)).rejects.toMatchObject({ details: { line: 4, byte: 35 } });
    // Bytes of the file as sent: a UTF-8 byte-order mark and a two-byte letter count.
    await expect(read('\ufeffName,Email\nJ\u00fcrg,"j@x.test\n')).rejects.toMatchObject({ details: { line: 2, byte: 21 } });
    // Windows-1252: one byte a letter; UTF-16: two a code unit, after its byte-order mark.
    await expect(read(Buffer.from('Name,Email\nJ\u00fcrg,"j@x.test\n', 'latin1'))).rejects.toMatchObject({
      details: { line: 2, byte: 17 },
    });
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Name\tEmail\nAnn\t"a@x.test\n', 'utf16le')]);
    await expect(read(utf16)).rejects.toMatchObject({ details: { line: 2, byte: 2 + 2 * 15 + 1 } });
  });

  it('refuses a quote inside an unquoted field, naming its line and byte (RFC 4180: such a field is quoted)', async () => {
    await expect(read('Name,Email\r\nAnn,a"b@example.com\r\n')).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/quote inside a field that is not quoted at line 2, byte 18\./),
      details: { line: 2, byte: 18 },
    });
    // After a closing quote only a separator or the line's end may come.
    await expect(read('Name,Email\nAnn,"a"b@x.test\n')).rejects.toMatchObject({ details: { line: 2, byte: 18 } });
  });
});

describe('CSV encodings', () => {
  const cp1252 = (text: string) => Buffer.from(text, 'latin1');

  it('reads a Windows-1252 file whose first accent comes after 64 KiB of ASCII, and names it', async () => {
    const ascii = Array.from({ length: 3_000 }, (_, i) => `Person ${i};p${i}@x.test`).join('\r\n');
    const { layout, rows } = await read(cp1252(`Name;E-Mail-Adresse\r\n${ascii}\r\nJürgen Weiß;j@x.test\r\n`), {});
    expect(layout).toMatchObject({ encoding: 'windows-1252', delimiter: ';', addressColumn: 1 });
    expect(rows.at(-1)).toEqual(['Jürgen Weiß', 'j@x.test']);
    expect(rows).toHaveLength(3_001);
  });

  it('reads the Windows-1252 letters that Latin-1 lacks (€, „, “) as Excel writes them', async () => {
    const bytes = Buffer.from([...Buffer.from('Name;Mail\r\n'), 0x80, 0x20, 0x84, 0x41, 0x93, ...Buffer.from(';a@x.test\r\n')]);
    expect((await read(bytes)).rows).toEqual([['€ „A“', 'a@x.test']]);
    // The one non-ASCII byte ends the file: a character cut short in UTF-8, a letter in Windows-1252.
    expect((await read(Buffer.from('email;name\na@x.test;Ren\xe9', 'latin1'))).rows).toEqual([['a@x.test', 'René']]);
  });

  it('lets a charset parameter win: windows-1252, utf-16, and utf-8 refusing other bytes by line and byte', async () => {
    expect((await read(Buffer.from('email\nä@x.test\n', 'latin1'), { charset: 'windows-1252' })).rows).toEqual([['ä@x.test']]);
    const utf16 = await read(Buffer.from('email\tname\na@x.test\tÅsa\n', 'utf16le'), { charset: 'utf-16le' });
    expect(utf16).toMatchObject({ layout: { encoding: 'utf-16le', delimiter: '\t' }, rows: [['a@x.test', 'Åsa']] });
    // The bad byte at byte 90, on line 4: the message says so (it said "near byte 1").
    const text = Buffer.concat([
      Buffer.from(`email,name\n${'a@x.test,Ann\n'.repeat(2)}`),
      Buffer.from('b@x.test,Ren'),
      Buffer.from([0xe9]),
      Buffer.from('e\n'),
    ]);
    const padded = Buffer.concat([Buffer.from('x'.repeat(90 - 1 - text.indexOf(0xe9)).replace(/x/g, ' ')), text]);
    await expect(read(padded, { charset: 'utf-8' })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('is not UTF-8 (byte 0xE9) at line 4, byte 90.'),
      details: { line: 4, byte: 90 },
    });
    // A lone surrogate: not UTF-16, at the line and byte of that code unit (the mark is 2 bytes).
    const surrogate = Buffer.concat([Buffer.from('\ufeffemail\na@x.test\n', 'utf16le'), Buffer.from([0x00, 0xd8, 0x41, 0x00])]);
    await expect(read(surrogate)).rejects.toMatchObject({ message: expect.stringContaining('is not utf-16le at line 3, byte 33.') });
    await expect(read(Buffer.from('email\n'), { charset: 'klingon' })).rejects.toMatchObject({
      message: expect.stringContaining('charset=klingon'),
    });
  });

  it('refuses bytes that are not UTF-8 after UTF-8 was decided, naming the line and byte', async () => {
    // Within the first 64 KiB from the first accent, bytes that are not UTF-8 make the file Windows-1252.
    const mixed = Buffer.concat([Buffer.from('name;email\r\nRenée;r@x.test\r\n'), Buffer.from('Ren\xe9;s@x.test\r\n', 'latin1')]);
    expect((await read(mixed)).layout.encoding).toBe('windows-1252');
    // Past them, UTF-8 was decided: the file is refused where it stops being UTF-8.
    const utf8 = `name;email\r\nRenée;r@x.test\r\n${'Ann;a@x.test\r\n'.repeat(6_000)}`;
    const bytes = Buffer.concat([Buffer.from(utf8), Buffer.from('Ren\xe9;s@x.test\r\n', 'latin1')]);
    await expect(read(bytes)).rejects.toMatchObject({
      message: expect.stringMatching(/^The CSV file is not UTF-8 \(byte 0xE9\) at line 6003, byte 84033\. .*charset=windows-1252/),
    });
  });

  it('refuses a workbook renamed .csv, a binary file and JSON, each saying what to do', async () => {
    await expect(read(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x06, 0x00]))).rejects.toMatchObject({
      message: expect.stringContaining('an Excel workbook (.xlsx) or another ZIP file, not CSV. Save it as "CSV UTF-8"'),
    });
    const binary = Buffer.concat([Buffer.from('email\na@x.test\n'), Buffer.from([0x89, 0x01, 0x02, 0xff])]);
    await expect(read(binary)).rejects.toMatchObject({ message: expect.stringContaining('so it is not text at line 3, byte 17') });
    await expect(read('{"emails":["a@x.test"]}')).rejects.toMatchObject({
      message: expect.stringContaining('Content-Type: application/json'),
    });
  });
});
