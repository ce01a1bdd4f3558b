/**
 * Reading an uploaded CSV list with csv-parse, as a stream: RFC 4180 quoting, the encodings of
 * csv-encoding.ts (turned into UTF-8 before parsing), `,`, `;` or tab between fields (whichever
 * splits the first record into more fields, or what an Excel `sep=` first line says), rows of
 * uneven length accepted, blank lines skipped. The address column is found from the first rows
 * (upload-layout.ts, as for a workbook); the rows then stream.
 */
import type { Readable } from 'node:stream';
import { ApiError, LIST_BODY_LIMIT_BYTES } from '@svc/contracts';
import type { CsvLayout } from './model.ts';
import { CsvError, parse } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { UploadDecoder, refusal } from './csv-encoding.ts';
import { QuoteTracker, filePosition } from './csv-quotes.ts';
import { laidOut } from './upload-layout.ts';

/**
 * CRLF, LF or CR, in any mix: left to itself the parser takes the first line end it meets for the
 * whole file, and a file whose first line ends otherwise than the rest is read as one row.
 */
const LINE_ENDS = ['\r\n', '\n', '\r'];
/** Excel's first line naming the separator. */
const SEPARATOR_LINE = /^sep=([,;\t]) *\r?\n/i;
const DELIMITERS = [',', ';', '\t'] as const;
type Delimiter = (typeof DELIMITERS)[number];
/** Enough of the start of the body to see its first record. */
const PEEK_BYTES = 64 * 1024;
/** A single row this long is not a contact. */
const MAX_RECORD_BYTES = 1024 * 1024;

export const payloadTooLarge = (): ApiError =>
  new ApiError('payload_too_large', `A list upload may be at most ${LIST_BODY_LIMIT_BYTES / (1024 * 1024)} MiB.`);

export interface CsvUploadOptions {
  limitBytes?: number;
  /** The Content-Type's `charset` parameter. */
  charset?: string | undefined;
  /** `?column=`: a header name or a 1-based index. */
  column?: string | undefined;
}

export interface CsvUpload {
  layout: CsvLayout;
  /** Data rows (the header excluded), as cells. */
  rows: AsyncIterable<string[]>;
  /** What is known for sure only once every row was read: the encoding, and whether the results start with a byte-order mark. */
  settle(): Pick<CsvLayout, 'encoding' | 'bom'>;
}

/** `,`, `;` or tab: the one that splits the first record (blank lines skipped, quotes honoured) into most fields; `,` on a tie. */
export function detectDelimiter(head: string): Delimiter {
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
  let best: Delimiter = ',';
  let most = fields(',');
  for (const delimiter of DELIMITERS.slice(1)) {
    const count = fields(delimiter);
    if (count > most) [best, most] = [delimiter, count];
  }
  return best;
}

/**
 * The body's chunks up to `limit` bytes. Leaving early (too large, a bad row) does not destroy the
 * request: the gateway reads the rest and drops it so that the client, still sending, gets the
 * answer instead of a reset (see drainUnreadBody).
 */
export async function* limited(body: Readable, limit: number): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += buffer.length;
    if (total > limit) throw payloadTooLarge();
    yield buffer;
  }
}

const QUOTING_ADVICE = 'A field that holds a quote, a separator or a line break is quoted, with its quotes doubled ("a ""b"" c").';

/** The parser's refusal in the contract's terms: where a quote went wrong, by line and byte of the file as sent. */
function csvProblem(error: CsvError, quotes: QuoteTracker, decoder: UploadDecoder): ApiError {
  const at = (where: NonNullable<QuoteTracker['stray']>) => filePosition(where, decoder.encoding, decoder.hadBom);
  const unclosed = quotes.unclosed;
  if (error.code === 'CSV_QUOTE_NOT_CLOSED' && unclosed !== undefined)
    return refusal('has a quoted field that is not closed, opening', at(unclosed), QUOTING_ADVICE);
  if (error.code === 'INVALID_OPENING_QUOTE' && quotes.stray !== undefined)
    return refusal('has a quote inside a field that is not quoted', at(quotes.stray), QUOTING_ADVICE);
  if (error.code === 'CSV_INVALID_CLOSING_QUOTE' && quotes.badClose !== undefined)
    return refusal('has a closing quote followed by more than a separator or a line end', at(quotes.badClose), QUOTING_ADVICE);
  const where = typeof error.lines === 'number' ? ` near line ${error.lines}` : '';
  const what = error.code === 'CSV_MAX_RECORD_SIZE' ? 'a row is longer than 1 MiB' : 'it is not valid CSV (RFC 4180)';
  return new ApiError('invalid_request', `The CSV body could not be read${where}: ${what}.`);
}

const looksLikeJson = (text: string): boolean => /^\s*[[{]\s*["{[\]}]/.test(text);

/** Reads the start of the upload for its layout and address column; rows then stream from the rest of the body. */
export async function readCsvUpload(body: Readable, options: CsvUploadOptions = {}): Promise<CsvUpload> {
  const decoder = new UploadDecoder(options.charset);
  const source = decoder.decode(limited(body, options.limitBytes ?? LIST_BODY_LIMIT_BYTES))[Symbol.asyncIterator]();
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
  const text = start.toString('utf8');
  if (looksLikeJson(text))
    throw new ApiError('invalid_request', 'The body is JSON, not CSV: send it with Content-Type: application/json as { "emails": [...] }.');
  const separatorLine = SEPARATOR_LINE.exec(text.replace(/^\ufeff/, ''));
  const named = DELIMITERS.find((delimiter) => delimiter === separatorLine?.[1]);
  const delimiter = named ?? detectDelimiter(text);

  async function* bytes(): AsyncGenerator<Buffer> {
    try {
      yield start;
      if (ended) return;
      for (let next = await source.next(); next.done !== true; next = await source.next()) yield next.value;
    } finally {
      await source.return(undefined);
    }
  }
  const quotes = new QuoteTracker(delimiter.charCodeAt(0));
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
        // Before the parser sees it: its error about a quote is then answered by where it was.
        quotes.scan(chunk);
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
      throw error instanceof CsvError ? csvProblem(error, quotes, decoder) : error;
    }
  };
  const stop = async () => {
    parser.destroy();
    await feeding;
  };
  const { columns, addressColumn, headerRow, rows } = await laidOut({ next, stop }, options.column, 'CSV file');
  return {
    layout: { columns, addressColumn, delimiter, bom: false, headerRow },
    rows,
    // Results are UTF-8 whatever came in; a byte-order mark tells Excel, which wrote a
    // Windows-1252 or UTF-16 file, that they are.
    settle: () => ({ encoding: decoder.encoding, bom: decoder.hadBom || decoder.encoding !== 'utf-8' }),
  };
}
