/**
 * A list's results, read one input chunk at a time, so a 100,000-entry list never sits whole in
 * memory: each entry in input order, with the result of its distinct address under the entry's
 * own spelling; rows without an address only in the CSV, with empty result columns. The view is a snapshot of the list record read first: results that settled after
 * it are left out with the rest, so `pending` is exact (`count - processed` of that record).
 * A list that was cancelled or failed keeps every row: its entries never probed come with reason
 * `not_verified` (JSON: `verdict` null; CSV: an empty verdict), so the file still has every input row.
 */
import {
  FULL_RESULT_COLUMNS,
  RESULT_COLUMNS,
  UTF8_BOM,
  neutraliseCell,
  resultCells,
  NOT_VERIFIED,
  type ResultForm,
  type VerifyResult,
} from '@svc/contracts';
import { INPUT_CHUNK_ROWS, NO_ADDRESS, type ListRecord } from './model.ts';
import type { ListStore } from './store.ts';
import { stringify } from 'csv-stringify/sync';

/** An entry of a cancelled or failed list that was never probed. */
export interface NotVerifiedResult {
  email: string;
  verdict: null;
  score: null;
  reason: typeof NOT_VERIFIED;
  checks: null;
}

/** What an entry's result is in the results: settled, or never probed (its list ended first). */
export type EntryResult = VerifyResult | NotVerifiedResult;

const isNotVerified = (result: EntryResult): result is NotVerifiedResult => result.verdict === null;

/** Rows a list that ended without completing keeps without a result: every one, as not_verified. */
const keepsUnsettled = (record: ListRecord): boolean => record.status === 'cancelled' || record.status === 'failed';

export interface SettledRow {
  /** Position in the upload, from 0. */
  position: number;
  /** The distinct address's index: rows sharing it are duplicates of each other. */
  index: number;
  cells: string[];
  result: EntryResult;
}

/** A row of the upload without an address: no entry, only a row of the CSV results. */
export interface BlankRow {
  position: number;
  index: null;
  cells: string[];
  result: null;
}

/** Settled entries from input position `from` on, in input order, until `limit` are found or the list ends. */
export async function* settledEntries(store: ListStore, record: ListRecord, from = 0, limit = Infinity): AsyncGenerator<SettledRow> {
  for await (const row of uploadRows(store, record, from, limit, false)) if (row.result !== null) yield row;
}

/** A page of results from input position `from` on, each with its position, and where the next page starts (null after the last row). */
export async function resultsPage(
  store: ListStore,
  record: ListRecord,
  from: number,
  limit: number,
): Promise<{ results: Array<EntryResult & { position: number }>; next: number | null }> {
  const results: Array<EntryResult & { position: number }> = [];
  let last = from - 1;
  for await (const entry of settledEntries(store, record, from, limit)) {
    results.push({ ...entry.result, position: entry.position });
    last = entry.position;
  }
  const rows = record.count + (record.layout.skipped ?? 0); // rows without an address have positions too
  return { results, next: results.length === limit && last + 1 < rows ? last + 1 : null };
}

/** Settled entries and rows without an address, in input order (`blank` on: those rows are yielded too, not counted in `limit`). */
async function* uploadRows(
  store: ListStore,
  record: ListRecord,
  from: number,
  limit: number,
  blank: boolean,
): AsyncGenerator<SettledRow | BlankRow> {
  const address = record.layout.addressColumn;
  let found = 0;
  for (let chunk = Math.floor(from / INPUT_CHUNK_ROWS); chunk < record.inputChunks && found < limit; chunk += 1) {
    const rows = await store.inputChunk(record.id, chunk);
    const indices = [...new Set(rows.map(([index]) => index).filter((index) => index !== NO_ADDRESS))];
    const stored = await store.results(record.id, indices);
    const byIndex = new Map(indices.map((index, i) => [index, stored[i]]));
    for (const [offset, [index, ...cells]] of rows.entries()) {
      const position = chunk * INPUT_CHUNK_ROWS + offset;
      if (position < from) continue;
      if (index === NO_ADDRESS) {
        if (blank) yield { position, index: null, cells, result: null };
        continue;
      }
      const settled = byIndex.get(index);
      const email = cells[address] ?? '';
      if (settled === undefined || settled.seq > record.settled) {
        if (!keepsUnsettled(record)) continue;
        yield { position, index, cells, result: { email, verdict: null, score: null, reason: NOT_VERIFIED, checks: null } };
      } else yield { position, index, cells, result: { ...settled.result, email } };
      found += 1;
      if (found >= limit) return;
    }
  }
}

/** Entries left out of the results: not settled yet (none once a cancelled or failed list keeps them as not_verified). */
export const pendingOf = (record: ListRecord): number => (keepsUnsettled(record) ? 0 : record.count - record.processed);

export async function* jsonResults(store: ListStore, record: ListRecord): AsyncGenerator<string> {
  const head = { id: record.id, status: record.status, count: record.count, pending: pendingOf(record) };
  yield `${JSON.stringify(head).slice(0, -1)},"results":[`;
  let first = true;
  let batch = '';
  for await (const entry of settledEntries(store, record)) {
    batch += (first ? '' : ',') + JSON.stringify(entry.result);
    first = false;
    if (batch.length >= 64 * 1024) {
      yield batch;
      batch = '';
    }
  }
  yield `${batch}]}`;
}

/**
 * The CSV results: the upload's rows in its separator with the result columns of `form` appended,
 * after a UTF-8 byte-order mark (always: Excel on Windows reads accents right only with it), every
 * cell neutralised against formulas (neutraliseCell), the header included. A row is flagged
 * `duplicate` (full form) when an earlier row had the same address.
 */
export async function* csvResults(store: ListStore, record: ListRecord, form: ResultForm = 'default'): AsyncGenerator<string> {
  const { columns, delimiter } = record.layout;
  const width = columns.length;
  const write = (rows: string[][]): string => stringify(rows, { delimiter, cast: { string: neutraliseCell } });
  yield UTF8_BOM + write([[...columns, ...(form === 'full' ? FULL_RESULT_COLUMNS : RESULT_COLUMNS)]]);
  const seen = new Set<number>();
  let rows: string[][] = [];
  for await (const { cells, result, index } of uploadRows(store, record, 0, Infinity, true)) {
    const padded = cells.length >= width ? cells : [...cells, ...Array<string>(width - cells.length).fill('')];
    const duplicate = index !== null && seen.has(index);
    if (index !== null) seen.add(index);
    rows.push([
      ...padded,
      ...(result !== null && isNotVerified(result)
        ? resultCells(null, form, duplicate, NOT_VERIFIED)
        : resultCells(result, form, duplicate)),
    ]);
    if (rows.length >= 1_000) {
      yield write(rows);
      rows = [];
    }
  }
  if (rows.length > 0) yield write(rows);
}
