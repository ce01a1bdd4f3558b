/**
 * Reading the chosen file in the browser, before anything is sent or billed: its encoding (as the
 * service reads it: UTF-8, UTF-16 with a BOM, else Windows-1252), its rows (papaparse: quoting,
 * `,` `;` or tab), the address column and the distinct addresses that set the price.
 *
 * The reading of bytes and the wording are the console's own; the rules are the service's, bundled
 * from its packages so that they cannot drift from what the service does with the same file: the
 * address column (@svc/lists/columns), the dedup key and limits (@svc/contracts/rules) and the price of a list
 * (the operations table and the billing rule's list units, @svc/metering/billing).
 */
import { ApiError, LIST_BODY_LIMIT_BYTES, MAX_LIST_ADDRESSES, dedupKey } from '@svc/contracts/rules';
import { SAMPLE_ROWS, detectColumn, looksLikeAddress, type DetectedColumn } from '@svc/lists/columns';
import { costOf, listCharge, listUnits } from '@svc/metering/billing';
import Papa from 'papaparse';

export const MAX_BYTES = LIST_BODY_LIMIT_BYTES;
export const MAX_ADDRESSES = MAX_LIST_ADDRESSES;

export interface ReadFile {
  encoding: string;
  columns: string[];
  hasHeader: boolean;
  rows: string[][];
  /** The detected address column (0-based), and how it was found. */
  detected: { index: number; by: 'header' | 'content' };
}

export class FileProblem extends Error {}

function decode(bytes: Uint8Array): { text: string; encoding: string } {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { text: new TextDecoder('utf-16le').decode(bytes), encoding: 'UTF-16LE' };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { text: new TextDecoder('utf-16be').decode(bytes), encoding: 'UTF-16BE' };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'UTF-8' };
  } catch {
    return { text: new TextDecoder('windows-1252').decode(bytes), encoding: 'Windows-1252' };
  }
}

/** Control characters other than tab and line ends do not occur in text exports: a zip, a spreadsheet or an image renamed .csv. */
function isBinary(text: string): boolean {
  for (let i = 0; i < Math.min(text.length, 4096); i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d && code !== 0x0c) return true;
  }
  return text.includes('\u0000');
}

export async function readCsvFile(file: File): Promise<ReadFile> {
  if (file.size === 0) throw new FileProblem('This file is empty: choose a CSV file with a column of email addresses.');
  if (file.size > MAX_BYTES) throw new FileProblem('This file is larger than 16 MiB: split it into smaller files and upload each.');
  const bytes = new Uint8Array(await file.arrayBuffer());
  const { text, encoding } = decode(bytes);
  if (isBinary(text))
    throw new FileProblem('This is not a text file: export your contacts as CSV (comma, semicolon or tab separated) and choose that.');
  const body = text.replace(/^\ufeff/, '').replace(/^sep=.\r?\n/i, '');
  const parsed = Papa.parse<string[]>(body, { skipEmptyLines: 'greedy', delimitersToGuess: [',', ';', '\t', '|'] });
  return readRows(
    parsed.data.filter((row) => Array.isArray(row)),
    encoding,
  );
}

/** The headers a refusal lists: the first row's non-empty cells, as many as fit a sentence. */
function headersSeen(first: string[]): string {
  const names = first.map((cell) => cell.trim()).filter((cell) => cell !== '');
  if (names.length === 0) return 'the first row is empty';
  const shown = names.slice(0, 12).map((name) => (name.length > 40 ? `${name.slice(0, 39)}…` : name));
  return `columns found: ${shown.join(', ')}${names.length > shown.length ? `, and ${names.length - shown.length} more` : ''}`;
}

/**
 * The rows of a file (a CSV's or a workbook's first sheet), read as the service reads them: the
 * address column by the service's rule, the header row, the other rows kept.
 */
export function readRows(all: string[][], encoding: string): ReadFile {
  const first = all[0];
  if (first === undefined) throw new FileProblem('This file has no rows: choose a CSV file with a column of email addresses.');
  // The service's rule sees what its reader sees: the first row and the next SAMPLE_ROWS.
  let choice: DetectedColumn;
  try {
    choice = detectColumn(first, all.slice(1, SAMPLE_ROWS + 1));
  } catch (error) {
    // The rule's one refusal, said in the console's words (there is no `?column=` here to point to), with what was seen.
    if (error instanceof ApiError)
      throw new FileProblem(
        `No column of this file holds email addresses (${headersSeen(first)}): check that you exported the address column, then choose the file again.`,
      );
    throw error;
  }
  const { index, header: hasHeader, preamble, by } = choice;
  // As the service keeps them: a note above the header row (LinkedIn's "Notes:") stays as rows.
  const headerRow = hasHeader ? all[preamble] : undefined;
  const rows = hasHeader ? [...all.slice(0, preamble), ...all.slice(preamble + 1)] : all;
  const width = Math.max(index + 1, headerRow?.length ?? 0, ...rows.slice(0, SAMPLE_ROWS).map((row) => row.length));
  const columns = Array.from({ length: width }, (_, i) => {
    const name = headerRow?.[i] ?? '';
    return name.trim() !== '' ? name : `Column ${i + 1}`;
  });
  return { encoding, columns, hasHeader, rows, detected: { index, by } };
}

/**
 * Addresses (non-empty cells: each is verified and billed, well-formed or not), distinct ones, and
 * how many look like addresses at all (none: the wrong column, which would bill every row).
 */
export function countAddresses(rows: string[][], column: number): { addresses: number; distinct: number; wellFormed: number } {
  const seen = new Set<string>();
  let addresses = 0;
  let wellFormed = 0;
  for (const row of rows) {
    const cell = (row[column] ?? '').trim();
    if (cell === '') continue;
    addresses += 1;
    if (looksLikeAddress(cell)) wellFormed += 1;
    seen.add(dedupKey(cell));
  }
  return { addresses, distinct: seen.size, wellFormed };
}

/**
 * `$` and the amount, in dollars and cents: what the distinct addresses cost once processed, by the
 * service's billing rule (a unit per started 100, each at the list operation's price).
 */
const dollars = (microUsd: number): string => `$${(microUsd / 1_000_000).toFixed(2)}`;

export const priceOf = (distinct: number): string => dollars(costOf('email-verify.list', listUnits(distinct)));

/**
 * What this list will be charged given the key's free units left this month (the batch
 * allowance, which list units share): its units, how many the allowance covers, the price after
 * it and the price without it. `freeUnits` unknown (usage could not be read): no discount shown.
 */
export function chargeOf(distinct: number, freeUnits: number | undefined): { units: number; free: number; price: string; full: string } {
  // The billing rule's own quote (@svc/metering/billing), so that the console cannot price by another rule.
  const charge = listCharge(distinct, freeUnits ?? 0);
  return {
    units: charge.units,
    free: charge.units - charge.billableUnits,
    price: dollars(charge.chargeMicroUsd),
    full: dollars(charge.undiscountedMicroUsd),
  };
}

/**
 * The results CSV cut to the rows `keep` accepts, header kept, in the file's own delimiter and with
 * its byte-order mark: the same full form as `Download all`, fewer rows. `keep` gets each row and
 * the index of a result column by name (the service appends its columns after the uploaded ones:
 * the last column of a name is the service's, whatever the upload had).
 */
export function cutResults(csv: string, keep: (row: string[], column: (name: string) => number) => boolean): string {
  const bom = csv.startsWith('\ufeff');
  const parsed = Papa.parse<string[]>(csv.replace(/^\ufeff/, ''), { skipEmptyLines: 'greedy' });
  const [header, ...rows] = parsed.data;
  if (header === undefined) return csv;
  const column = (name: string) => header.lastIndexOf(name);
  const kept = rows.filter((row) => keep(row, column));
  return (bom ? '\ufeff' : '') + Papa.unparse([header, ...kept], { delimiter: parsed.meta.delimiter, newline: '\r\n' }) + '\r\n';
}

/** The results CSV cut to one verdict: the header row and the rows whose `verdict` column says it. */
export const filterResults = (csv: string, verdict: string): string => cutResults(csv, (row, column) => row[column('verdict')] === verdict);
