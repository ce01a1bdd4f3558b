/**
 * Reading an Excel workbook (`.xlsx`) in the browser, before anything is sent: its first sheet as
 * rows, handed to the same reading as a CSV (address column, preview, distinct count, price). A
 * workbook is a zip of XML parts: fflate unzips (a well-kept 8 kB library; the service uses yauzl,
 * which needs Node's streams) and the browser's own DOMParser reads the XML. Only the parts needed
 * are inflated, and only when the sizes their entries declare fit XLSX_INFLATE_LIMIT_BYTES, the
 * service's bound (fflate inflates an entry into a buffer of its declared size, so a zip bomb is
 * refused before any work, and one that lies about its size cannot grow past it).
 */
import { LIST_BODY_LIMIT_BYTES } from '@svc/contracts/rules';
import { unzipSync } from 'fflate';
import { FileProblem, MAX_BYTES, readRows, type ReadFile } from './csv.ts';

export const XLSX_MEDIA_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
/** What the parts read may inflate to, as the service allows (decisions "List verification": bounded). */
export const XLSX_INFLATE_LIMIT_BYTES = 8 * LIST_BODY_LIMIT_BYTES;

export const isZip = (bytes: Uint8Array): boolean => bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;

const unreadable = (why: string) =>
  new FileProblem(`This workbook could not be read (${why}): save the first sheet as CSV and choose that, or check the file.`);

const xml = (bytes: Uint8Array | undefined, name: string): Document => {
  if (bytes === undefined) throw unreadable(`it has no ${name}`);
  const document = new DOMParser().parseFromString(new TextDecoder().decode(bytes), 'application/xml');
  if (document.getElementsByTagName('parsererror').length > 0) throw unreadable(`its ${name} is not valid XML`);
  return document;
};

/** Elements by local name, whatever prefix the workbook's writer gave the namespace. */
const byName = (parent: Document | Element, name: string): Element[] => [...parent.getElementsByTagNameNS('*', name)];

/** The text of a shared or inline string: its runs' `t` elements, phonetic guides (`rPh`) left out. */
const stringText = (item: Element): string =>
  byName(item, 't')
    .filter((t) => t.parentElement?.localName !== 'rPh')
    .map((t) => t.textContent ?? '')
    .join('');

/** `B12` → 1 (0-based column index). */
function columnOf(reference: string): number | undefined {
  const letters = /^([A-Z]{1,3})\d+$/.exec(reference)?.[1];
  if (letters === undefined) return undefined;
  let index = 0;
  for (const letter of letters) index = index * 26 + (letter.charCodeAt(0) - 64);
  return index - 1;
}

/** The path of the first sheet, from the workbook and its relationships. */
function firstSheetPath(workbook: Document, relationships: Document): string {
  const id = byName(workbook, 'sheet')[0]?.getAttributeNS('http://schemas.openxmlformats.org/officeDocument/2006/relationships', 'id');
  const target = byName(relationships, 'Relationship')
    .find((relationship) => relationship.getAttribute('Id') === id)
    ?.getAttribute('Target');
  if (target === undefined || target === null) return 'xl/worksheets/sheet1.xml';
  return target.startsWith('/') ? target.slice(1) : `xl/${target}`;
}

function unzip(bytes: Uint8Array, wanted: (name: string) => boolean): Record<string, Uint8Array> {
  let declared = 0;
  try {
    return unzipSync(bytes, {
      filter: (entry) => {
        if (!wanted(entry.name)) return false;
        declared += entry.originalSize;
        if (declared > XLSX_INFLATE_LIMIT_BYTES)
          throw new FileProblem(
            `This workbook inflates to more than ${XLSX_INFLATE_LIMIT_BYTES / (1024 * 1024)} MiB: too large for one list (or not a real workbook). Split it, or save the sheet as CSV.`,
          );
        return true;
      },
    });
  } catch (error) {
    if (error instanceof FileProblem) throw error;
    throw unreadable('it is not a valid zip file');
  }
}

/** The first sheet's rows, blank rows left out, cells as text. */
export function workbookRows(bytes: Uint8Array): string[][] {
  const structure = unzip(bytes, (name) => name === 'xl/workbook.xml' || name === 'xl/_rels/workbook.xml.rels');
  const sheetPath = firstSheetPath(
    xml(structure['xl/workbook.xml'], 'workbook part'),
    xml(structure['xl/_rels/workbook.xml.rels'], 'workbook relationships'),
  );
  const parts = unzip(bytes, (name) => name === sheetPath || name === 'xl/sharedStrings.xml');
  const shared =
    parts['xl/sharedStrings.xml'] === undefined ? [] : byName(xml(parts['xl/sharedStrings.xml'], 'shared strings'), 'si').map(stringText);
  const sheet = xml(parts[sheetPath], 'first sheet');
  const rows: string[][] = [];
  for (const row of byName(sheet, 'row')) {
    const cells: string[] = [];
    let next = 0;
    for (const cell of byName(row, 'c')) {
      const at = columnOf(cell.getAttribute('r') ?? '') ?? next;
      next = at + 1;
      const type = cell.getAttribute('t');
      const value = byName(cell, 'v')[0]?.textContent ?? '';
      const inline = byName(cell, 'is')[0];
      const text =
        type === 's'
          ? (shared[Number(value)] ?? '')
          : type === 'inlineStr'
            ? inline === undefined
              ? ''
              : stringText(inline)
            : type === 'b'
              ? value === '1'
                ? 'TRUE'
                : 'FALSE'
              : value;
      while (cells.length < at) cells.push('');
      cells[at] = text;
    }
    if (cells.some((cell) => cell.trim() !== '')) rows.push(cells);
  }
  return rows;
}

export async function readWorkbookFile(file: File): Promise<ReadFile> {
  if (file.size > MAX_BYTES) throw new FileProblem('This file is larger than 16 MiB: split it into smaller files and upload each.');
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (!isZip(bytes)) throw unreadable('it is not an Excel workbook');
  const rows = workbookRows(bytes);
  if (rows.length === 0) throw new FileProblem('The first sheet of this workbook is empty: put the addresses on the first sheet.');
  return readRows(rows, 'Excel workbook');
}
