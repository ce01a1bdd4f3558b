/**
 * Files as people export them from a CRM or an address book, and what the rig's mail servers make
 * of each address; Excel workbooks; and the PNG the QR studio draws, read by the same decoder as
 * every other code.
 */
import { scanSvg } from '@svc/testkit';
import { zipSync } from 'fflate';

export interface ExportRow {
  cells: string[];
  verdict: 'deliverable' | 'risky' | 'undeliverable';
}

/** Cells that would run as script or markup if the console inserted them as HTML. */
export const HOSTILE = ['<img src=x onerror="alert(1)">', '<script>alert("cell")</script>', '"><b>bold</b>'] as const;

const quote = (cell: string) => (/[,"\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

/**
 * A CRM export: BOM, CRLF, the address in a column headed `Work Email` (the fourth), quoted cells
 * with commas and line breaks, duplicates, hostile cells. `known` addresses of shop.test are
 * deliverable, others of shop.test undeliverable, those of catch.test (a catch-all) risky.
 */
export function crmExport(distinct: number): { text: string; header: string[]; rows: ExportRow[] } {
  const header = ['First Name', 'Last Name', 'Company', 'Work Email', 'Phone', 'Notes'];
  const rows: ExportRow[] = [];
  for (let i = 0; i < distinct; i += 1) {
    const kind = i % 5 === 4 ? 'risky' : i % 3 === 2 ? 'undeliverable' : 'deliverable';
    const address = kind === 'risky' ? `someone${i}@catch.test` : kind === 'undeliverable' ? `gone${i}@shop.test` : `known${i}@shop.test`;
    const notes = HOSTILE[i % 7] ?? (i % 11 === 0 ? 'met at the fair,\nfollow up' : `note ${i}`);
    rows.push({
      cells: [`Person${i}`, `Family, ${i}`, 'ACME Corp', address, `+1 555 01${String(i).padStart(2, '0')}`, notes],
      verdict: kind,
    });
  }
  // known0 again, the domain in capitals: one distinct address, probed and billed once.
  rows.push({ cells: ['Person0', 'Again', 'ACME Corp', 'known0@SHOP.TEST', '', 'twice'], verdict: 'deliverable' });
  const text = `\ufeff${[header, ...rows.map((row) => row.cells)].map((cells) => cells.map(quote).join(',')).join('\r\n')}\r\n`;
  return { text, header, rows };
}

/** The known mailboxes of shop.test in crmExport(distinct). */
export const knownUsers = (distinct: number): string[] => Array.from({ length: distinct }, (_, i) => `known${i}@shop.test`);

/** A PNG read by the tests' decoder (resvg draws it inside an SVG, jsQR reads the pixels). */
export function scanPng(png: Buffer): string | undefined {
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `<image width="${width}" height="${height}" href="data:image/png;base64,${png.toString('base64')}"/></svg>`;
  return scanSvg(svg);
}

const escapeXml = (text: string) => text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c] ?? c);
const columnName = (index: number): string =>
  index < 26 ? String.fromCharCode(65 + index) : columnName(Math.floor(index / 26) - 1) + String.fromCharCode(65 + (index % 26));

/**
 * An Excel workbook (.xlsx) as Excel writes one: text in the shared strings table, and a second
 * sheet the readers must ignore.
 */
export function workbook(rows: string[][]): Buffer {
  const shared: string[] = [];
  const sheetRows = rows
    .map((cells, r) => {
      const xmlCells = cells
        .map((cell, c) => {
          if (cell === '') return '';
          shared.push(cell);
          return `<c r="${columnName(c)}${r + 1}" t="s"><v>${shared.length - 1}</v></c>`;
        })
        .join('');
      return `<row r="${r + 1}">${xmlCells}</row>`;
    })
    .join('');
  const sheet = (data: string) =>
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${data}</sheetData></worksheet>`;
  const text = (value: string) => new TextEncoder().encode(value);
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': text(
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
      ),
      '_rels/.rels': text(
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
      ),
      'xl/workbook.xml': text(
        '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Contacts" sheetId="1" r:id="rId2"/><sheet name="Notes" sheetId="2" r:id="rId1"/></sheets></workbook>',
      ),
      'xl/_rels/workbook.xml.rels': text(
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet2.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
      ),
      'xl/worksheets/sheet1.xml': text(sheet(sheetRows)),
      'xl/worksheets/sheet2.xml': text(sheet('<row r="1"><c r="A1" t="inlineStr"><is><t>not@this.sheet</t></is></c></row>')),
      'xl/sharedStrings.xml': text(
        `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${shared.length}" uniqueCount="${shared.length}">${shared.map((s) => `<si><t xml:space="preserve">${escapeXml(s)}</t></si>`).join('')}</sst>`,
      ),
    }),
  );
}

/**
 * A zip bomb in a workbook's clothes: the first sheet's entry declares that it inflates to
 * `declared` bytes (a zip's headers say so before any inflating; a reader that trusts nothing
 * else must refuse it there). Its local header and central directory entry both say it.
 */
export function workbookBomb(declared: number): Buffer {
  const zip = workbook([['Email'], ['a@shop.test']]);
  const name = Buffer.from('xl/worksheets/sheet1.xml');
  for (let at = zip.indexOf(name); at >= 0; at = zip.indexOf(name, at + 1)) {
    if (zip.readUInt32LE(at - 30) === 0x04034b50) zip.writeUInt32LE(declared, at - 30 + 22);
    else if (zip.readUInt32LE(at - 46) === 0x02014b50) zip.writeUInt32LE(declared, at - 46 + 24);
  }
  return zip;
}
