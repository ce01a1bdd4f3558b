/**
 * Reading an uploaded CSV list with csv-parse, as a stream: RFC 4180 quoting, UTF-8 with or
 * without a byte-order mark (UTF-16 with one is converted, anything else refused: csv-encoding.ts),
 * `,` or `;` between fields (whichever splits the first record into more fields, or what an
 * Excel `sep=;` first line says), rows of uneven length accepted, blank lines skipped.
 *
 * The address column is the one headed `email`, `e-mail`, `mail` or `address` (any case, and the
 * forms contact exports write: `Email Address`, `E-mail 1 - Value`, `email_address`); without such
 * a header the first column. A first row that names no address column but whose first cell holds
 * an `@` is data, not a header (a bare list of addresses).
 */
import type { Readable } from 'node:stream';
import { ApiError, LIST_BODY_LIMIT_BYTES, invalidParameter } from '@svc/contracts';
import type { CsvLayout } from '@svc/lists';
import { CsvError, parse } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { asUtf8 } from './csv-encoding.ts';

/** A header naming the address column, once lower-cased without spaces, `-` and `_`: `email`, `Email Address`, `E-mail 1 - Value`. */
const ADDRESS_HEADER = /^(?:e?mail|address)\d*(?:address|value)?$/;
/**
 * CRLF, LF or CR, in any mix: left to itself the parser takes the first line end it meets for the
 * whole file, and a file whose first line ends otherwise than the rest is read as one row.
 */
const LINE_ENDS = ['\r\n', '\n', '\r'];
/** Excel's first line naming the separator. */
const SEPARATOR_LINE = /^(?:\ufeff)?sep=([,;])[ \t]*\r?\n/i;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** Enough of the start of the body to see its first record and its byte-order mark. */
const PEEK_BYTES = 64 * 1024;
/** A single row this long is not a contact. */
const MAX_RECORD_BYTES = 1024 * 1024;

export const payloadTooLarge = (): ApiError =>
  new ApiError('payload_too_large', `A list upload may be at most ${LIST_BODY_LIMIT_BYTES / (1024 * 1024)} MiB.`);

export interface CsvUpload {
  layout: CsvLayout;
  /** Data rows (the header excluded), as cells. */
  rows: AsyncIterable<string[]>;
}

/** `,` or `;`: the one that splits the first record (blank lines skipped, quotes honoured) into more fields. */
export function detectDelimiter(head: string): ',' | ';' {
  const fields = (delimiter: string): number => {
    try {
      const records: string[][] = parseSync(head, {
        delimiter,
        relax_quotes: true,
        relax_column_count: true,
        skip_empty_lines: true,
        record_delimiter: LINE_ENDS,
        to: 1,
      });
      const [record] = records;
      return record?.length ?? 0;
    } catch {
      return 0;
    }
  };
  return fields(';') > fields(',') ? ';' : ',';
}

export const COLUMN_MESSAGE = 'column must be a header of the file (any case) or its 1-based index.';

/** `?column=`: a 1-based index, or a header of the file (any case); anything else is refused. */
export function chosenColumn(column: string, columns: string[]): number {
  const index = /^\d+$/.test(column)
    ? Number(column) - 1
    : columns.findIndex((name) => name.trim().toLowerCase() === column.trim().toLowerCase());
  if (index < 0 || index >= columns.length) throw invalidParameter('column', COLUMN_MESSAGE);
  return index;
}

/** Which row 1 is: a header naming the address column, a header without one, or data. */
export function headerOf(first: string[]): { header: boolean; addressColumn: number } {
  const named = first.findIndex((cell) => ADDRESS_HEADER.test(cell.toLowerCase().replace(/[\s_-]+/g, '')));
  if (named >= 0) return { header: true, addressColumn: named };
  return { header: !(first[0] ?? '').includes('@'), addressColumn: 0 };
}

/** Column names of a file without a header row. */
const generatedColumns = (width: number): string[] => Array.from({ length: width }, (_, i) => (i === 0 ? 'email' : `column_${i + 1}`));

/**
 * The body's chunks up to `limit` bytes. Leaving early (too large, a bad row) does not destroy the
 * request: the gateway reads the rest and drops it so that the client, still sending, gets the
 * answer instead of a reset (see drainUnreadBody).
 */
async function* limited(body: Readable, limit: number): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += buffer.length;
    if (total > limit) throw payloadTooLarge();
    yield buffer;
  }
}

function csvProblem(error: CsvError): ApiError {
  const where = typeof error.lines === 'number' ? ` near line ${error.lines}` : '';
  const what =
    error.code === 'CSV_QUOTE_NOT_CLOSED'
      ? 'a quoted field is not closed'
      : error.code === 'CSV_MAX_RECORD_SIZE'
        ? 'a row is longer than 1 MiB'
        : 'it is not valid CSV (RFC 4180)';
  return new ApiError('invalid_request', `The CSV body could not be read${where}: ${what}.`);
}

/** Reads the start of the upload (up to 64 KiB) for its layout; rows then stream from the rest of the body. */
export async function readCsvUpload(body: Readable, limitBytes = LIST_BODY_LIMIT_BYTES, column?: string): Promise<CsvUpload> {
  const source = asUtf8(limited(body, limitBytes))[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headBytes = 0;
  let ended = false;
  while (headBytes < PEEK_BYTES) {
    const next = await source.next();
    if (next.done === true) {
      ended = true;
      break;
    }
    head.push(next.value);
    headBytes += next.value.length;
  }
  const start = Buffer.concat(head);
  const bom = start.subarray(0, 3).equals(BOM);
  const text = start.subarray(bom ? 3 : 0).toString('utf8');
  const separatorLine = SEPARATOR_LINE.exec(text);
  const delimiter = separatorLine?.[1] === ',' || separatorLine?.[1] === ';' ? separatorLine[1] : detectDelimiter(text);

  async function* bytes(): AsyncGenerator<Buffer> {
    try {
      yield start;
      if (ended) return;
      for (let next = await source.next(); next.done !== true; next = await source.next()) yield next.value;
    } finally {
      await source.return(undefined);
    }
  }
  const parser = parse({
    bom: true,
    delimiter,
    relax_column_count: true,
    skip_empty_lines: true,
    record_delimiter: LINE_ENDS,
    max_record_size: MAX_RECORD_BYTES,
    from_line: separatorLine === null ? 1 : 2,
  });
  // The parser may stop (a bad row, the caller gone) while it waits for room: a wait on 'drain'
  // alone would then never end, and the request with it.
  const room = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        parser.off('drain', done).off('close', done);
        resolve();
      };
      parser.once('drain', done).once('close', done);
    });
  const feeding = (async () => {
    try {
      for await (const chunk of bytes()) {
        if (parser.destroyed) return;
        if (!parser.write(chunk)) await room();
      }
      parser.end();
    } catch (error) {
      parser.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  })();
  const records = parser[Symbol.asyncIterator]() as AsyncIterator<string[]>;

  const next = async (): Promise<IteratorResult<string[]>> => {
    try {
      return await records.next();
    } catch (error) {
      throw error instanceof CsvError ? csvProblem(error) : error;
    }
  };
  const first = await next();
  const firstRow = first.done === true ? [] : first.value;
  const { header, addressColumn: found } = headerOf(firstRow);
  const columns = header ? firstRow : generatedColumns(Math.max(1, firstRow.length));
  let addressColumn = found;
  try {
    if (column !== undefined) addressColumn = chosenColumn(column, columns);
  } catch (error) {
    // Refused before any row was taken: stop the parser so that its feeding ends.
    parser.destroy();
    await feeding;
    throw error;
  }

  async function* rows(): AsyncGenerator<string[]> {
    try {
      if (!header && first.done !== true) yield firstRow;
      for (let row = await next(); row.done !== true; row = await next()) yield row.value;
    } finally {
      parser.destroy();
      await feeding;
    }
  }
  return { layout: { columns, addressColumn, delimiter, bom }, rows: rows() };
}
