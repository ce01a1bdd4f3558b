/**
 * Which column of an upload holds the addresses (docs/lists.md, "The address column"):
 * 1. `?column=`: a header name (any case) or a 1-based index;
 * 2. else a column whose header names an e-mail address, in the words contact exports and people
 *    use (`Email`, `E-mail Address`, `Work Email`, `E-Mail-Adresse`, `Courriel`, `Correo`,
 *    `E-posta`, `Emailadres`, ...), the one with most address-like cells if several do (one empty
 *    in every sampled row only if no other column holds addresses);
 * 3. else a column whose header could be one (`Contact`, `Address`, `Recipient`, `Login`, ...)
 *    when its cells look like addresses;
 * 4. else the column whose non-empty cells most often look like addresses (of the first 1,000 rows);
 * 5. else a column headed just `address` (the contract's word), else none: the upload is refused.
 * The header row is row 1, or none (row 1 holds an address), or below a note (LinkedIn's export).
 * Pure: it sees the first row and a sample of the rows after it.
 */
import { ApiError, invalidParameter } from '@svc/contracts/rules';

/** Rows after the first that content detection looks at. */
export const SAMPLE_ROWS = 1_000;

/** Words for an e-mail address, on a header lower-cased, without accents, words split (`WorkEmail` is `work email`). */
const EMAIL_WORDS =
  /(?:^| )(?:e ?mails?|e ?mail ?ad+res+[ea]?s?|mails?|mail ?ad+res+[ea]?s?|courriels?|correos?|e ?posta|e ?post|e ?postadres+e?|epost|sahkoposti(?:osoite)?|e ?pasts|posta elettronica|adresse electronique|adresse de messagerie|messagerie|emailadres)(?: |\d|$)/;
/** The same in scripts without word spaces, or whose words the split above does not separate. */
const EMAIL_SCRIPTS =
  /メール|邮箱|电子邮件|電子郵件|電子メール|郵件|邮件|電郵|이메일|전자우편|почта|почты|имейл|емейл|імейл|البريد|ταχυδρομείο|ईमेल|อีเมล/;
/** Headers about an address rather than holding one: `Email Type`, `E-mail Display Name`, `Email Opt In`, `Email Domain`. */
const NOT_THE_ADDRESS =
  /(?:^| )(?:type|typ|status|opt|optin|optout|opted|consent|permission|verified|verification|valid|validity|bounced?|format|domain|display|name|label|count|date|time|subscribed|subscription|unsubscribed|preferences?|frequency|sent|opens?|clicks?|campaign|template|signature|score|quality|owner|sender|hash|md5|sha256)(?: |$)/;
/** Headers that may hold the address: taken when their cells look like addresses. */
const MAYBE_WORDS =
  /(?:^| )(?:address|adresse|adres|addr|direccion|indirizzo|endereco|contact|contacts|kontakt|contacto|contatto|recipient|recipients|empfanger|destinataire|destinatario|login|username|user|userid|benutzer|benutzername|identifiant|member|subscriber|abonnent|customer|kunde|client|to)(?: |$)/;
/** The contract's own bare word. */
const BARE_ADDRESS = /^(?:address|adresse)$/;

/** A header as words: accents dropped, camelCase and punctuation split, lower case. */
export function headerWords(header: string): string {
  return header
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** `strong`: the header names an e-mail address; `maybe`: it could hold one; `none`. */
export function headerKind(header: string): 'strong' | 'maybe' | 'none' {
  if (header.includes('@')) return 'none'; // an address itself: data, not a header
  const words = headerWords(header);
  if (NOT_THE_ADDRESS.test(words)) return 'none';
  if (EMAIL_WORDS.test(words) || EMAIL_SCRIPTS.test(header.toLowerCase())) return 'strong';
  return MAYBE_WORDS.test(words) ? 'maybe' : 'none';
}

/** Looks like an address: one `@` between a local part and a dotted domain, no spaces or list punctuation. */
export function looksLikeAddress(cell: string): boolean {
  return /^[^\s@<>()[\]{},;:"]+@[^\s@<>()[\]{},;:"]+\.[^\s@<>()[\]{},;:".]+$/u.test(cell.trim());
}

interface ColumnStats {
  index: number;
  addresses: number;
  filled: number;
}

function statsOf(rows: string[][], width: number): ColumnStats[] {
  const stats = Array.from({ length: width }, (_, index): ColumnStats => ({ index, addresses: 0, filled: 0 }));
  for (const row of rows)
    row.forEach((cell, index) => {
      const column = stats[index];
      if (column === undefined || cell.trim() === '') return;
      column.filled += 1;
      if (looksLikeAddress(cell)) column.addresses += 1;
    });
  return stats;
}

/** Most address-like cells first, then the larger share of them, then the leftmost. */
const byAddresses = (a: ColumnStats, b: ColumnStats): number =>
  b.addresses - a.addresses || b.addresses / Math.max(1, b.filled) - a.addresses / Math.max(1, a.filled) || a.index - b.index;

/** Most of its non-empty cells look like addresses. */
const mostlyAddresses = (column: ColumnStats): boolean => column.addresses > 0 && column.addresses * 2 >= column.filled;

export interface ColumnChoice {
  /** From 0. */
  index: number;
  /** Whether the file has a header row (else every row is data). */
  header: boolean;
  /** Rows before the header row (LinkedIn's "Notes:"): kept as rows, not as the header. */
  preamble: number;
}

/**
 * A column found without `?column=`, and how: by a header that names it (`Email`, or a named or
 * bare `address` column when none holds addresses), or by its content (a `Contact` that holds
 * addresses, or no header saying). The console says which to the person choosing the file.
 */
export interface DetectedColumn extends ColumnChoice {
  by: 'header' | 'content';
}

/** Rows after the first among which a header row is looked for when the first row is a note, not a header. */
const PREAMBLE_ROWS = 10;
const filled = (row: string[]): number => row.filter((cell) => cell.trim() !== '').length;

/**
 * Rows before the header: some exports start with a note (LinkedIn's Connections.csv: `Notes:`
 * and a paragraph). Only when row 1 is a single cell naming no address, and a later row of
 * several cells names one and holds no address itself.
 */
function preambleOf(first: string[], sample: string[][]): number {
  if (filled(first) > 1 || first.some((cell) => headerKind(cell) === 'strong')) return 0;
  const at = sample
    .slice(0, PREAMBLE_ROWS)
    .findIndex((row) => filled(row) > 1 && row.some((cell) => headerKind(cell) === 'strong') && !row.some((cell) => cell.includes('@')));
  return at + 1;
}

/** Is row 1 a header? Yes, unless it names no address column and one of its cells is an address. */
export function isHeaderRow(first: string[]): boolean {
  return first.some((cell) => headerKind(cell) === 'strong') || !first.some((cell) => cell.includes('@'));
}

const headersSaid = (first: string[]): string =>
  first
    .slice(0, 20)
    .map((cell, i) => `${i + 1} "${cell}"`)
    .join(', ');

/** The column `requested` (`?column=`) names: a 1-based index, or a header in any case. */
function requestedColumn(requested: string, first: string[], sample: string[][]): Omit<ColumnChoice, 'preamble'> {
  const header = isHeaderRow(first);
  const width = Math.max(first.length, ...sample.map((row) => row.length));
  const wanted = requested.trim();
  if (/^\d+$/.test(wanted)) {
    const index = Number(wanted);
    if (index < 1 || index > width)
      throw invalidParameter(
        'column',
        `column ${wanted} is out of range: this file has ${width} column${width === 1 ? '' : 's'} (counted from 1).`,
      );
    return { index: index - 1, header };
  }
  const index = first.findIndex((cell) => cell.trim().toLowerCase() === wanted.toLowerCase());
  if (index < 0)
    throw invalidParameter(
      'column',
      `No column is headed "${wanted}". The header row has: ${headersSaid(first)}. Give a header or a 1-based column number.`,
    );
  return { index, header: true };
}

/** The header row (or first data row) and the rows after it, once a preamble is set aside: the preamble rows go with the data. */
function belowPreamble(first: string[], sample: string[][], preamble: number): [string[], string[][]] {
  if (preamble === 0) return [first, sample];
  return [sample[preamble - 1]!, [first, ...sample.slice(0, preamble - 1), ...sample.slice(preamble)]];
}

/** The address column of an upload whose first row is `first` and whose next rows start with `sample`. */
export function chooseColumn(first: string[], sample: string[][], requested?: string): ColumnChoice {
  if (requested === undefined) {
    const { index, header, preamble } = detectColumn(first, sample);
    return { index, header, preamble };
  }
  const preamble = preambleOf(first, sample);
  return { ...requestedColumn(requested, ...belowPreamble(first, sample, preamble)), preamble };
}

/** The address column without `?column=`, and how it was found: what the service takes, and what the console shows before upload. */
export function detectColumn(first: string[], sample: string[][]): DetectedColumn {
  const preamble = preambleOf(first, sample);
  return { ...detectIn(...belowPreamble(first, sample, preamble)), preamble };
}

/** The address column below the header row (or first data row) `first`. */
function detectIn(first: string[], sample: string[][]): Omit<DetectedColumn, 'preamble'> {
  const header = isHeaderRow(first);
  const rows = header ? sample : [first, ...sample];
  const width = Math.max(first.length, ...rows.map((row) => row.length));
  const stats = statsOf(rows, width);
  const kinds = header ? first.map(headerKind) : [];
  const named = stats.filter((column) => kinds[column.index] === 'strong').sort(byAddresses);
  // A named column empty in every sampled row gives way to a column that holds addresses.
  const strong = named.find((column) => column.filled > 0 || rows.length === 0);
  if (strong !== undefined) return { index: strong.index, header, by: 'header' };
  const maybe = stats.filter((column) => kinds[column.index] === 'maybe' && mostlyAddresses(column)).sort(byAddresses)[0];
  if (maybe !== undefined) return { index: maybe.index, header, by: 'content' };
  const content = stats.filter(mostlyAddresses).sort(byAddresses)[0];
  if (content !== undefined) return { index: content.index, header, by: 'content' };
  if (named[0] !== undefined) return { index: named[0].index, header, by: 'header' };
  const bare = header ? first.findIndex((cell) => BARE_ADDRESS.test(headerWords(cell))) : -1;
  if (bare >= 0) return { index: bare, header, by: 'header' };
  throw new ApiError(
    'invalid_request',
    'No column of this file holds e-mail addresses: no header names one ' +
      `(${header ? `the header row has: ${headersSaid(first)}` : 'the file has no header row'}) and no column's cells look like addresses. ` +
      'Give the column with ?column= (a header or a 1-based number), or check that this is the right file.',
    { details: { columns: header ? first.slice(0, 50) : [] } },
  );
}
