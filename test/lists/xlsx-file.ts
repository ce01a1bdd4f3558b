/**
 * Excel workbooks for tests, written as Excel writes them: a zip (deflated parts, a central
 * directory) of the content types, the workbook and its relationships, a shared strings table and
 * the sheets (cells of type `s` pointing into the table, numbers as `<v>`, an inline string).
 * Also a zip bomb: a sheet of a few hundred KiB that inflates to hundreds of MiB.
 */
import { crc32, deflateRawSync, createDeflateRaw } from 'node:zlib';

interface Part {
  name: string;
  data: Buffer;
  /** Inflated size and CRC, when `data` is already deflated. */
  raw?: { size: number; crc: number };
}

/** A zip archive of `parts` (deflate, no zip64). */
export function zip(parts: Part[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const part of parts) {
    const name = Buffer.from(part.name, 'utf8');
    const deflated = part.raw === undefined ? deflateRawSync(part.data) : part.data;
    const size = part.raw?.size ?? part.data.length;
    const crc = part.raw?.crc ?? crc32(part.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(deflated.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, deflated);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(0x0800, 8);
    entry.writeUInt16LE(8, 10);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(deflated.length, 20);
    entry.writeUInt32LE(size, 24);
    entry.writeUInt16LE(name.length, 28);
    entry.writeUInt32LE(offset, 42);
    central.push(entry, name);
    offset += local.length + name.length + deflated.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const escape = (text: string): string =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

const columnName = (index: number): string => {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
};

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>`;

function workbookParts(sheetNames: string[]): Part[] {
  // The first sheet in the workbook's order is stored as sheet2.xml: the reader must follow the relationships.
  const file = (i: number) => `sheet${sheetNames.length - i}.xml`;
  const workbook = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>${sheetNames
    .map((name, i) => `<sheet name="${escape(name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`)
    .join('')}</sheets></workbook>`;
  const rels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheetNames
    .map(
      (_, i) =>
        `<Relationship Id="rId${i + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/${file(i)}"/>`,
    )
    .join('')}</Relationships>`;
  return [
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: 'xl/workbook.xml', data: Buffer.from(workbook) },
    { name: 'xl/_rels/workbook.xml.rels', data: Buffer.from(rels) },
  ];
}

/**
 * A workbook whose sheets hold `sheets` (rows of cells; a number is written as a number cell, a
 * string through the shared strings table, except strings starting with `inline:`).
 */
export function xlsx(sheets: Array<Array<Array<string | number>>>): Buffer {
  const strings: string[] = [];
  const indexOf = new Map<string, number>();
  const shared = (text: string): number => {
    let index = indexOf.get(text);
    if (index === undefined) {
      index = strings.length;
      strings.push(text);
      indexOf.set(text, index);
    }
    return index;
  };
  const sheetXml = (rows: Array<Array<string | number>>) =>
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows
      .map(
        (row, r) =>
          `<row r="${r + 1}">${row
            .map((cell, c) => {
              const ref = `${columnName(c)}${r + 1}`;
              if (typeof cell === 'number') return `<c r="${ref}"><v>${cell}</v></c>`;
              if (cell === '') return '';
              if (cell.startsWith('inline:')) return `<c r="${ref}" t="inlineStr"><is><t>${escape(cell.slice(7))}</t></is></c>`;
              return `<c r="${ref}" t="s"><v>${shared(cell)}</v></c>`;
            })
            .join('')}</row>`,
      )
      .join('')}</sheetData></worksheet>`;
  const names = sheets.map((_, i) => `Sheet${i + 1}`);
  const sheetParts = sheets.map((rows, i) => ({ name: `xl/worksheets/sheet${sheets.length - i}.xml`, data: Buffer.from(sheetXml(rows)) }));
  const sst = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${strings.length}" uniqueCount="${strings.length}">${strings
    .map((text) => `<si><t xml:space="preserve">${escape(text)}</t></si>`)
    .join('')}</sst>`;
  return zip([...workbookParts(names), ...sheetParts, { name: 'xl/sharedStrings.xml', data: Buffer.from(sst) }]);
}

/** A workbook whose one sheet inflates to `inflatedMiB` MiB of empty rows: a few hundred KiB on the wire. */
export async function zipBomb(inflatedMiB: number): Promise<Buffer> {
  const head = Buffer.from('<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>');
  const tail = Buffer.from('</sheetData></worksheet>');
  const filler = Buffer.from('<row/>'.repeat((1024 * 1024) / 8) + '  '.repeat((1024 * 1024) / 8)); // 1 MiB
  const deflate = createDeflateRaw({ level: 6 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => deflate.on('end', resolve));
  let crc = crc32(head);
  deflate.write(head);
  for (let i = 0; i < inflatedMiB; i += 1) {
    crc = crc32(filler, crc);
    if (!deflate.write(filler)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  crc = crc32(tail, crc);
  deflate.end(tail);
  await ended;
  const size = head.length + tail.length + inflatedMiB * filler.length;
  return zip([...workbookParts(['Sheet1']), { name: 'xl/worksheets/sheet1.xml', data: Buffer.concat(out), raw: { size, crc } }]);
}
