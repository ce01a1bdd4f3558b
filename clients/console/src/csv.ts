/**
 * Reading the chosen file in the browser, before anything is sent or billed: its encoding (as the
 * service reads it: UTF-8, UTF-16 with a BOM, else Windows-1252), its rows (papaparse: quoting,
 * `,` `;` or tab), the address column (by header, else by content) and the distinct addresses
 * that set the price.
 */
import Papa from 'papaparse';

export const MAX_BYTES = 16 * 1024 * 1024;
export const MAX_ADDRESSES = 100_000;
/** Dollars per started 100 distinct addresses (docs/api.md, "Prices"). */
const UNIT_PRICE_CENTS = 15;

export interface ReadFile {
  encoding: string;
  columns: string[];
  hasHeader: boolean;
  rows: string[][];
  /** The detected address column (0-based), and how it was found. */
  detected: { index: number; by: 'header' | 'content' };
}

export class FileProblem extends Error {}

const ADDRESS = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
/** Headers that name an address: `email`, `E-Mail`, `Work Email`, `E-Mail-Adresse`, `mail`, `address`, `Email Address`. */
const ADDRESS_HEADER = /e-?mail|^mail|^address$|^adresse$/;

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

const looksLikeAddress = (cell: string | undefined): boolean => ADDRESS.test((cell ?? '').trim());

/** Of `columns`, the one whose cells most often look like addresses in the first 1,000 rows; -1 when none has any. */
function mostAddresses(rows: string[][], columns: number[]): number {
  let best = -1;
  let bestCount = 0;
  for (const column of columns) {
    const hits = rows.slice(0, 1000).filter((row) => looksLikeAddress(row[column])).length;
    if (hits > bestCount) [best, bestCount] = [column, hits];
  }
  return best;
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
  const all = parsed.data.filter((row) => Array.isArray(row));
  const first = all[0];
  if (first === undefined) throw new FileProblem('This file has no rows: choose a CSV file with a column of email addresses.');
  const width = Math.max(...all.slice(0, 1000).map((row) => row.length));
  const indices = Array.from({ length: width }, (_, i) => i);
  const named = indices.filter((i) => ADDRESS_HEADER.test((first[i] ?? '').trim().toLowerCase()));
  const hasHeader = named.length > 0 || !first.some(looksLikeAddress);
  const rows = hasHeader ? all.slice(1) : all;
  const columns = indices.map((i) => (hasHeader && (first[i] ?? '').trim() !== '' ? (first[i] ?? '') : `Column ${i + 1}`));
  // Of the columns a header names (`Email`, but also `Email opt-out`), the one holding addresses. A
  // named column that holds none gives way to one that does (`Email Opt-In` of yes/no beside a
  // `Contact` of addresses, a postal `Address`), as the service reads the file: the preview and
  // price must be those of the column the service would take. Named and empty: only when no column holds any.
  const byHeader = mostAddresses(rows, named);
  const content = mostAddresses(rows, indices);
  const header = byHeader >= 0 ? byHeader : content >= 0 ? -1 : (named[0] ?? -1);
  if (header < 0 && content < 0)
    throw new FileProblem(
      'No column of this file holds email addresses: check that you exported the address column, then choose the file again.',
    );
  return {
    encoding,
    columns,
    hasHeader,
    rows,
    detected: header >= 0 ? { index: header, by: 'header' } : { index: content, by: 'content' },
  };
}

/** Duplicates count once by the service's rule: trimmed, domain in lower case, local part as is. */
export function dedupKey(input: string): string {
  const trimmed = input.trim();
  const at = trimmed.lastIndexOf('@');
  return at < 0 ? trimmed : `${trimmed.slice(0, at)}@${trimmed.slice(at + 1).toLowerCase()}`;
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

/** `$` and the amount: the batch price per started 100 distinct addresses. */
export const priceOf = (distinct: number): string => `$${((Math.ceil(distinct / 100) * UNIT_PRICE_CENTS) / 100).toFixed(2)}`;

/** The results CSV cut to one verdict: the header row and the rows whose `verdict` column says it. */
export function filterResults(csv: string, verdict: string): string {
  const bom = csv.startsWith('\ufeff');
  const parsed = Papa.parse<string[]>(csv.replace(/^\ufeff/, ''), { skipEmptyLines: 'greedy' });
  const [header, ...rows] = parsed.data;
  if (header === undefined) return csv;
  // The service appends its result columns after the uploaded ones, `verdict` first: the last
  // column of that name is the service's, whatever the upload had and whatever follows it.
  const at = header.lastIndexOf('verdict');
  const kept = rows.filter((row) => row[at] === verdict);
  return (bom ? '\ufeff' : '') + Papa.unparse([header, ...kept], { delimiter: parsed.meta.delimiter, newline: '\r\n' }) + '\r\n';
}
