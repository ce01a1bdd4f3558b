/**
 * Reading an uploaded Excel workbook (`.xlsx`): its first sheet, read like a CSV (the address
 * column found the same way, other columns kept, blank rows skipped), within the list limits.
 *
 * A workbook is a zip of XML parts. yauzl reads the zip (its central directory, then each part
 * inflated as a stream) and saxes parses the XML as it is inflated, so the sheet never sits whole
 * in memory: only the shared strings table does (cells point into it). What is inflated is
 * counted against XLSX_INFLATE_LIMIT_BYTES across all parts read, and the shared strings against
 * their own bound, so a zip bomb (a small file that inflates to gigabytes) is refused `413`
 * after a bounded amount of work. Why two libraries rather than a spreadsheet one: exceljs'
 * streaming reader offers no bound on what it inflates and builds a cell object per cell, and
 * SheetJS reads the whole workbook into memory; what is written here is only the mapping of the
 * sheet's XML to rows (figures: docs/lists.md, "Excel workbooks").
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { ApiError, LIST_BODY_LIMIT_BYTES } from '@svc/contracts';
import { SaxesParser } from 'saxes';
import { fromBuffer, type Entry, type ZipFile } from 'yauzl';
import type { CsvUpload } from './csv-upload.ts';
import { limited } from './csv-upload.ts';
import { laidOut } from './upload-layout.ts';

export const XLSX_MEDIA_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
/** What all the parts read may inflate to: a 100,000-row export of ten columns is about 45 MiB. */
export const XLSX_INFLATE_LIMIT_BYTES = 8 * LIST_BODY_LIMIT_BYTES;
/** The shared strings table is held in memory while the sheet is read: bounded on its own. */
const SHARED_STRINGS_LIMIT_BYTES = 3 * LIST_BODY_LIMIT_BYTES;
/** A zip's local file header. */
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

export const isZip = (start: Buffer): boolean => start.subarray(0, 4).equals(ZIP_MAGIC);

const unreadable = (why: string): ApiError =>
  new ApiError('invalid_request', `The workbook could not be read: ${why}. Send an Excel workbook (.xlsx), or save the sheet as CSV.`);

const inflatedTooMuch = (): ApiError =>
  new ApiError(
    'payload_too_large',
    `The workbook inflates to more than ${XLSX_INFLATE_LIMIT_BYTES / (1024 * 1024)} MiB: too large for one list (or not a real workbook). ` +
      'Split it, or save the sheet as CSV.',
  );

/** Bytes inflated so far, across the parts of one workbook. */
class InflateBudget {
  private used = 0;
  take(bytes: number): void {
    this.used += bytes;
    if (this.used > XLSX_INFLATE_LIMIT_BYTES) throw inflatedTooMuch();
  }
}

/** Element names without a namespace prefix (`x:row` is `row`): some writers prefix every element. */
const local = (name: string): string => name.slice(name.indexOf(':') + 1);

/** Feeds an inflated part to `parser` chunk by chunk, counting it; `each` runs after every chunk. */
async function* feed(stream: Readable, parser: SaxesParser, budget: InflateBudget, limit = Infinity): AsyncGenerator<void> {
  const decoder = new StringDecoder('utf8');
  let read = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      budget.take(chunk.length);
      read += chunk.length;
      if (read > limit) throw inflatedTooMuch();
      parser.write(decoder.write(chunk));
      yield;
    }
    parser.write(decoder.end());
    parser.close();
  } catch (error) {
    stream.destroy();
    if (error instanceof ApiError) throw error;
    throw unreadable(`a part of it is not well-formed XML (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
  }
}

async function open(zip: ZipFile, entry: Entry): Promise<Readable> {
  try {
    return await zip.openReadStreamPromise(entry);
  } catch (error) {
    throw unreadable(`its part ${entry.fileName} cannot be inflated (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** The parts of the zip by name (the central directory only: nothing is inflated). */
async function entriesOf(buffer: Buffer): Promise<{ zip: ZipFile; entries: Map<string, Entry> }> {
  let zip: ZipFile;
  try {
    zip = await new Promise<ZipFile>((resolve, reject) =>
      fromBuffer(buffer, { lazyEntries: true, validateEntrySizes: true }, (error, opened) => (error ? reject(error) : resolve(opened))),
    );
  } catch (error) {
    throw unreadable(`it is not a zip archive (${error instanceof Error ? error.message : String(error)})`);
  }
  const entries = new Map<string, Entry>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      entries.set(entry.fileName.replace(/^\/+/, ''), entry);
      zip.readEntry();
    });
    zip.once('end', resolve);
    zip.once('error', (error: Error) => reject(unreadable(`its directory is damaged (${error.message})`)));
    zip.readEntry();
  });
  return { zip, entries };
}

/** Reads a small part whole through `onTag`, which sees each element's name (unprefixed) and attributes. */
async function scanPart(
  zip: ZipFile,
  entry: Entry,
  budget: InflateBudget,
  onTag: (name: string, attributes: Record<string, string>) => void,
): Promise<void> {
  const parser = new SaxesParser();
  parser.on('opentag', (tag) => onTag(local(tag.name), tag.attributes as Record<string, string>));
  for await (const _ of feed(await open(zip, entry), parser, budget));
}

/** The path of the workbook's first sheet (`xl/worksheets/sheet1.xml` as Excel writes it). */
async function firstSheetPath(zip: ZipFile, entries: Map<string, Entry>, budget: InflateBudget): Promise<string> {
  const workbook = entries.get('xl/workbook.xml');
  const rels = entries.get('xl/_rels/workbook.xml.rels');
  if (workbook === undefined) throw unreadable('it has no xl/workbook.xml (is it an .xlsx, not an .xls or .ods?)');
  let relationId: string | undefined;
  await scanPart(zip, workbook, budget, (name, attributes) => {
    if (name === 'sheet' && relationId === undefined)
      relationId = Object.entries(attributes).find(([attribute]) => attribute === 'r:id' || attribute.endsWith(':id'))?.[1];
  });
  let target: string | undefined;
  if (rels !== undefined && relationId !== undefined)
    await scanPart(zip, rels, budget, (name, attributes) => {
      if (name === 'Relationship' && attributes.Id === relationId) target = attributes.Target;
    });
  if (target === undefined) return 'xl/worksheets/sheet1.xml';
  return target.startsWith('/') ? target.slice(1) : `xl/${target.replace(/^\.\//, '')}`;
}

/** The shared strings table: the text of each `<si>`, its runs joined, phonetic guides (`<rPh>`) left out. */
async function sharedStrings(zip: ZipFile, entry: Entry | undefined, budget: InflateBudget): Promise<string[]> {
  if (entry === undefined) return [];
  const strings: string[] = [];
  const parser = new SaxesParser();
  let current: string | undefined;
  let inText = false;
  let phonetic = 0;
  parser.on('opentag', (tag) => {
    const name = local(tag.name);
    if (name === 'si') current = '';
    else if (name === 'rPh') phonetic += 1;
    else if (name === 't' && phonetic === 0) inText = true;
  });
  parser.on('closetag', (tag) => {
    const name = local(tag.name);
    if (name === 'si') {
      strings.push(current ?? '');
      current = undefined;
    } else if (name === 'rPh') phonetic -= 1;
    else if (name === 't') inText = false;
  });
  const text = (chunk: string) => {
    if (inText && current !== undefined) current += chunk;
  };
  parser.on('text', text);
  parser.on('cdata', text);
  for await (const _ of feed(await open(zip, entry), parser, budget, SHARED_STRINGS_LIMIT_BYTES));
  return strings;
}

/** `C12` → 2: the column of a cell reference, from 0. */
export function columnOf(reference: string): number | undefined {
  const letters = /^([A-Z]{1,3})\d*$/i.exec(reference)?.[1];
  if (letters === undefined) return undefined;
  let index = 0;
  for (const letter of letters.toUpperCase()) index = index * 26 + (letter.charCodeAt(0) - 64);
  return index - 1;
}

/** The rows of a sheet as cells of text, as they are inflated; rows with no text are skipped (as a CSV's blank lines). */
async function* sheetRows(stream: Readable, strings: readonly string[], budget: InflateBudget): AsyncGenerator<string[]> {
  const parser = new SaxesParser();
  const ready: string[][] = [];
  let row: string[] | undefined;
  let cell: { column: number; type: string; value: string } | undefined;
  let capture = false;
  let phonetic = 0;
  parser.on('opentag', (tag) => {
    const name = local(tag.name);
    const attributes = tag.attributes as Record<string, string>;
    if (name === 'row') row = [];
    else if (name === 'c' && row !== undefined) {
      const column = columnOf(attributes.r ?? '') ?? row.length;
      cell = { column, type: attributes.t ?? 'n', value: '' };
    } else if (name === 'rPh') phonetic += 1;
    else if ((name === 'v' || (name === 't' && phonetic === 0)) && cell !== undefined) capture = true;
  });
  parser.on('closetag', (tag) => {
    const name = local(tag.name);
    if (name === 'v' || name === 't') capture = false;
    else if (name === 'rPh') phonetic -= 1;
    else if (name === 'c' && cell !== undefined && row !== undefined) {
      // A column far to the right (a stray `XFD1`) would pad the row with thousands of cells: ignored past the list's widest.
      if (cell.column < 16_384) {
        const { type, value } = cell;
        const text = type === 's' ? (strings[Number(value)] ?? '') : type === 'b' ? (value === '1' ? 'TRUE' : 'FALSE') : value;
        while (row.length < cell.column) row.push('');
        row[cell.column] = text;
      }
      cell = undefined;
    } else if (name === 'row' && row !== undefined) {
      if (row.some((text) => text.trim() !== '')) ready.push(row);
      row = undefined;
    }
  });
  const text = (chunk: string) => {
    if (capture && cell !== undefined) cell.value += chunk;
  };
  parser.on('text', text);
  parser.on('cdata', text);
  for await (const _ of feed(stream, parser, budget)) if (ready.length > 0) yield* ready.splice(0);
  yield* ready.splice(0);
}

export interface XlsxUploadOptions {
  limitBytes?: number;
  /** `?column=`: a header name or a 1-based index. */
  column?: string | undefined;
}

/** Reads an uploaded workbook (the body, at most 16 MiB) and lays out its first sheet's rows as a CSV upload's. */
export async function readXlsxUpload(body: Readable, options: XlsxUploadOptions = {}): Promise<CsvUpload> {
  const chunks: Buffer[] = [];
  for await (const chunk of limited(body, options.limitBytes ?? LIST_BODY_LIMIT_BYTES)) chunks.push(chunk);
  const buffer = Buffer.concat(chunks);
  if (buffer.length === 0) throw new ApiError('invalid_request', 'The workbook is empty: send 1 to 100000 addresses.');
  const { zip, entries } = await entriesOf(buffer);
  const budget = new InflateBudget();
  let rows: AsyncGenerator<string[]>;
  try {
    const path = await firstSheetPath(zip, entries, budget);
    const sheet = entries.get(path);
    if (sheet === undefined) throw unreadable(`its first sheet (${path}) is missing`);
    const strings = await sharedStrings(zip, entries.get('xl/sharedStrings.xml'), budget);
    rows = sheetRows(await open(zip, sheet), strings, budget);
  } catch (error) {
    zip.close();
    throw error;
  }
  const stop = async () => {
    await rows.return(undefined);
    zip.close();
  };
  const layout = await laidOut({ next: () => rows.next(), stop }, options.column, "workbook's first sheet");
  return {
    layout: {
      columns: layout.columns,
      addressColumn: layout.addressColumn,
      delimiter: ',',
      bom: true,
      headerRow: layout.headerRow,
      encoding: 'xlsx',
    },
    rows: layout.rows,
    settle: () => ({ encoding: 'xlsx', bom: true }),
  };
}
