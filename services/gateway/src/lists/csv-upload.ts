/**
 * Reading an uploaded CSV list with csv-parse, as a stream: RFC 4180 quoting, UTF-8 with or
 * without a byte-order mark, `,` or `;` between fields (whichever splits the first line into more
 * fields), rows of uneven length accepted, blank lines skipped.
 *
 * The address column is the one headed `email`, `e-mail`, `mail` or `address` (any case);
 * without such a header the first column. A first row that names no address column but whose
 * first cell holds an `@` is data, not a header (a bare list of addresses).
 */
import type { Readable } from 'node:stream';
import { ApiError, LIST_BODY_LIMIT_BYTES } from '@svc/contracts';
import type { CsvLayout } from '@svc/lists';
import { CsvError, parse } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';

const ADDRESS_HEADERS = new Set(['email', 'e-mail', 'mail', 'address']);
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** Enough of the start of the body to see its first line and its byte-order mark. */
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

/** `,` or `;`: the one that splits the first line into more fields. */
export function detectDelimiter(firstLine: string): ',' | ';' {
  const fields = (delimiter: string): number => {
    try {
      const records: string[][] = parseSync(firstLine, { delimiter, relax_quotes: true, relax_column_count: true, to_line: 1 });
      const [record] = records;
      return record?.length ?? 0;
    } catch {
      return 0;
    }
  };
  return fields(';') > fields(',') ? ';' : ',';
}

/** Which row 1 is: a header naming the address column, a header without one, or data. */
export function headerOf(first: string[]): { header: boolean; addressColumn: number } {
  const named = first.findIndex((cell) => ADDRESS_HEADERS.has(cell.trim().toLowerCase()));
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

/** Reads the upload's first line and layout; rows then stream from the rest of the body. */
export async function readCsvUpload(body: Readable, limitBytes = LIST_BODY_LIMIT_BYTES): Promise<CsvUpload> {
  const source = limited(body, limitBytes)[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headBytes = 0;
  let ended = false;
  while (headBytes < PEEK_BYTES && !Buffer.concat(head).includes(0x0a)) {
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
  const delimiter = detectDelimiter(text.split('\n', 1)[0] ?? '');

  async function* bytes(): AsyncGenerator<Buffer> {
    try {
      yield start;
      if (ended) return;
      for (let next = await source.next(); next.done !== true; next = await source.next()) yield next.value;
    } finally {
      await source.return(undefined);
    }
  }
  const parser = parse({ bom: true, delimiter, relax_column_count: true, skip_empty_lines: true, max_record_size: MAX_RECORD_BYTES });
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
  const { header, addressColumn } = headerOf(firstRow);
  const columns = header ? firstRow : generatedColumns(Math.max(1, firstRow.length));

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
