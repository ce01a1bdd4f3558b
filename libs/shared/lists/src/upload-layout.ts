/**
 * The layout of an upload from its first rows, whatever the file (CSV, a workbook's first sheet):
 * the first row and up to 1,000 rows after it are read before anything else to find the address
 * column and whether there is a header row (csv-columns.ts); they are then handed on with the rest
 * of the rows, which stream.
 */
import { SAMPLE_ROWS, chooseColumn, type ColumnChoice } from './csv-columns.ts';
import { ApiError } from '@svc/contracts';

/** Where an upload's records come from, and how to stop reading them (a refusal, the caller gone). */
export interface RecordSource {
  next: () => Promise<IteratorResult<string[]>>;
  stop: () => Promise<void>;
}

export interface RowsLayout {
  columns: string[];
  /** From 0. */
  addressColumn: number;
  headerRow: boolean;
  /** The data rows (the header excluded), the sampled ones first. */
  rows: AsyncGenerator<string[]>;
}

/** Column names of a file without a header row: the address column is `email`. */
const generatedColumns = (width: number, address: number): string[] =>
  Array.from({ length: width }, (_, i) => (i === address ? 'email' : `column_${i + 1}`));

/** `what` names the file in a refusal (`CSV file`, `workbook's first sheet`). */
export async function laidOut(source: RecordSource, column: string | undefined, what: string): Promise<RowsLayout> {
  const { next, stop } = source;
  let firstRow: string[];
  const sample: string[][] = [];
  let exhausted = false;
  let choice: ColumnChoice;
  try {
    const first = await next();
    if (first.done === true) throw new ApiError('invalid_request', `The ${what} is empty: send 1 to 100000 addresses.`);
    firstRow = first.value;
    while (sample.length < SAMPLE_ROWS) {
      const row = await next();
      if (row.done === true) {
        exhausted = true;
        break;
      }
      sample.push(row.value);
    }
    choice = chooseColumn(firstRow, sample, column);
  } catch (error) {
    await stop();
    throw error;
  }
  const { header, preamble, index } = choice;
  // The header row, and the rows read so far that are data (a preamble before the header is kept as rows).
  const headerRow = preamble === 0 ? firstRow : sample[preamble - 1]!;
  const before = header ? [...(preamble === 0 ? [] : [firstRow]), ...sample.slice(0, Math.max(0, preamble - 1))] : [firstRow];
  const after = sample.slice(preamble);
  const columns = header ? headerRow : generatedColumns(Math.max(1, firstRow.length, index + 1), index);

  async function* rows(): AsyncGenerator<string[]> {
    try {
      yield* before;
      yield* after;
      if (exhausted) return;
      for (let row = await next(); row.done !== true; row = await next()) yield row.value;
    } finally {
      await stop();
    }
  }
  return { columns, addressColumn: index, headerRow: header, rows: rows() };
}
