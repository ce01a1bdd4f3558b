/**
 * Contact exports as the tools people use write them (header rows, separators, encodings, quoting
 * and empty cells as they come), for the list tests: each with the column and encoding the
 * service must read and the verdict each row must get (`''`: a row without an address).
 */

/** Mailboxes of the test domain that exist; every other address there is rejected. */
export const EXPORT_DOMAIN = 'crm.test';
export const EXPORT_USERS = ['ann@crm.test', 'bob@crm.test', 'jurgen@crm.test', 'zoe@crm.test'];

export interface Export {
  name: string;
  bytes: Buffer;
  contentType: string;
  column: { index: number; header: string | null };
  encoding: string;
  delimiter: string;
  /** The file's rows as cells (header first), as read back. */
  rows: string[][];
  /** Per data row: the verdict, `''` when the row has no address. */
  verdicts: string[];
}

const quote = (delimiter: string) => (cell: string) =>
  cell.includes(delimiter) || /["\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;

function exportOf(spec: Omit<Export, 'bytes' | 'contentType'> & { write: (text: string) => Buffer; contentType?: string }): Export {
  const text = `${spec.rows.map((row) => row.map(quote(spec.delimiter)).join(spec.delimiter)).join('\r\n')}\r\n`;
  const { write, ...rest } = spec;
  return { ...rest, bytes: write(text), contentType: spec.contentType ?? 'text/csv' };
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const utf8Bom = (text: string) => Buffer.from(`\ufeff${text}`, 'utf8');
/** Windows-1252 for the letters these files hold (all of them in Latin-1's range but €). */
const cp1252 = (text: string) => Buffer.from(Array.from(text, (char) => (char === '€' ? 0x80 : char.charCodeAt(0))));
const utf16le = (text: string) => Buffer.from(`\ufeff${text}`, 'utf16le');

export const EXPORTS: Export[] = [
  exportOf({
    name: 'Outlook (Windows-1252, ",")',
    write: cp1252,
    delimiter: ',',
    encoding: 'windows-1252',
    column: { index: 4, header: 'E-mail Address' },
    rows: [
      ['First Name', 'Last Name', 'Company', 'E-mail Address', 'E-mail Type', 'E-mail Display Name'],
      ['Ann', 'Åberg', 'Acme, Inc.', 'ann@crm.test', 'SMTP', 'Ann Åberg (ann@crm.test)'],
      ['Bo', 'Nobody', '', 'gone@crm.test', 'SMTP', 'Bo'],
      ['Phone', 'Only', '', '', '', ''],
    ],
    verdicts: ['deliverable', 'undeliverable', ''],
  }),
  exportOf({
    name: 'Google Contacts (UTF-8, ",")',
    write: utf8,
    delimiter: ',',
    encoding: 'utf-8',
    column: { index: 4, header: 'E-mail 1 - Value' },
    rows: [
      ['Name', 'Given Name', 'E-mail 1 - Type', 'E-mail 1 - Value', 'Phone 1 - Value'],
      ['Bob Ray', 'Bob', '* Home', 'bob@crm.test', '+1 555 0100'],
      ['Zoë', 'Zoë', '* Work', 'zoe@crm.test', ''],
    ],
    verdicts: ['deliverable', 'deliverable'],
  }),
  exportOf({
    name: 'HubSpot (UTF-8, ",")',
    write: utf8,
    delimiter: ',',
    encoding: 'utf-8',
    column: { index: 4, header: 'Email' },
    rows: [
      ['Record ID', 'First Name', 'Last Name', 'Email', 'Email Domain', 'Contact owner'],
      ['101', 'Ann', 'Lee', 'ann@crm.test', 'crm.test', 'Sam Seller'],
      ['102', 'No', 'Mail', '', '', 'Sam Seller'],
      ['103', 'Typo', 'Guy', 'typo@crm.test', 'crm.test', ''],
    ],
    verdicts: ['deliverable', '', 'undeliverable'],
  }),
  exportOf({
    name: 'Mailchimp (UTF-8 with BOM, ",", a postal Address column)',
    write: utf8Bom,
    delimiter: ',',
    encoding: 'utf-8',
    column: { index: 1, header: 'Email Address' },
    rows: [
      ['Email Address', 'First Name', 'Last Name', 'Address', 'MEMBER_RATING'],
      ['zoe@crm.test', 'Zoe', 'Ng', '1 Main St, Springfield', '2'],
      ['bob@crm.test', 'Bob', 'Ray', '', '5'],
    ],
    verdicts: ['deliverable', 'deliverable'],
  }),
  exportOf({
    name: 'German Excel "CSV" (Windows-1252, ";", E-Mail-Adresse)',
    write: cp1252,
    delimiter: ';',
    encoding: 'windows-1252',
    column: { index: 3, header: 'E-Mail-Adresse' },
    rows: [
      ['Vorname', 'Nachname', 'E-Mail-Adresse', 'Umsatz'],
      ['Jürgen', 'Weiß', 'jurgen@crm.test', '1.200 €'],
      ['Änne', 'Groß', '', '0 €'],
      ['Ömer', 'Öztürk', 'oemer@crm.test', '15 €'],
    ],
    verdicts: ['deliverable', '', 'undeliverable'],
  }),
  exportOf({
    name: 'Excel "Unicode text" (UTF-16LE, tab)',
    write: utf16le,
    delimiter: '\t',
    encoding: 'utf-16le',
    column: { index: 3, header: 'Work Email' },
    rows: [
      ['Name', 'Company', 'Work Email', 'Personal email'],
      ['Zoë Ørsted', 'Nørd ApS', 'zoe@crm.test', 'zoe@private.example'],
      ['王芳', '公司', 'wang@crm.test', ''],
    ],
    verdicts: ['deliverable', 'undeliverable'],
  }),
  exportOf({
    name: 'A sheet with the address in column 3 headed Contact',
    write: utf8,
    delimiter: ',',
    encoding: 'utf-8',
    column: { index: 3, header: 'Contact' },
    rows: [
      ['Name', 'Company', 'Contact', 'Notes'],
      ['Ann', 'Acme', 'ann@crm.test', 'met at the fair'],
      ['Bob', 'Bolt', 'bob@crm.test', ''],
      ['Cy', 'Cog', '', 'call instead'],
    ],
    verdicts: ['deliverable', 'deliverable', ''],
  }),
];

/** Data rows of `file` as the results CSV gives them back: the cells padded to the header's width. */
export function paddedRows(file: Export): string[][] {
  const [header, ...rows] = file.rows;
  return rows.map((row) => [...row, ...Array<string>(Math.max(0, header!.length - row.length)).fill('')]);
}
