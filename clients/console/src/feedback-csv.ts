/**
 * A CSV of what happened when mail was sent, read into the generic feedback door's events
 * (decisions, "Learning from sends": `{ email, outcome }`, `outcome` one of hard_bounce,
 * soft_bounce, delivered, complaint). The file is read as a list upload is (csv.ts: encoding,
 * delimiter, the address column by the service's rule); the outcome column is the one named like
 * an outcome (`outcome`, `event`, `type`, `status`...) or else the one whose cells are outcomes,
 * and its cells may be in the words sending services export (`bounce`, `Delivery`, `spamreport`).
 * Rows it cannot read are refused here, each with its row number and why, before anything is sent.
 */
import { looksLikeAddress } from '@svc/lists/columns';
import type { ReadFile } from './csv.ts';

export const OUTCOMES = ['hard_bounce', 'soft_bounce', 'delivered', 'complaint'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The door's limit per call: a longer file goes in several calls. */
export const EVENTS_PER_CALL = 1_000;

/** Outcome words as the sending services and their exports write them (lower case, `_` for spaces and hyphens). */
const WORDS: Readonly<Record<string, Outcome>> = {
  hard_bounce: 'hard_bounce',
  hardbounce: 'hard_bounce',
  hard: 'hard_bounce',
  bounce: 'hard_bounce',
  bounced: 'hard_bounce',
  permanent: 'hard_bounce',
  soft_bounce: 'soft_bounce',
  softbounce: 'soft_bounce',
  soft: 'soft_bounce',
  transient: 'soft_bounce',
  temporary: 'soft_bounce',
  deferred: 'soft_bounce',
  delivered: 'delivered',
  delivery: 'delivered',
  complaint: 'complaint',
  complained: 'complaint',
  spam: 'complaint',
  spamreport: 'complaint',
  spam_report: 'complaint',
  spam_complaint: 'complaint',
  spamcomplaint: 'complaint',
};

/** Header names of an outcome column, most telling first. */
const OUTCOME_HEADERS = ['outcome', 'event', 'event_type', 'type', 'status', 'recordtype', 'bounce_type'];

const word = (cell: string): string =>
  cell
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

export const outcomeOf = (cell: string): Outcome | null => WORDS[word(cell)] ?? null;

/** The outcome column: by its header, else the first other column whose filled cells (of the first 50) all read as outcomes. */
export function findOutcomeColumn(read: ReadFile, addressColumn: number): number | null {
  const byHeader = read.hasHeader
    ? OUTCOME_HEADERS.map((name) => read.columns.findIndex((column, i) => i !== addressColumn && word(column) === name)).find((i) => i >= 0)
    : undefined;
  if (byHeader !== undefined) return byHeader;
  const sample = read.rows.slice(0, 50);
  const found = read.columns.findIndex((_, i) => {
    if (i === addressColumn) return false;
    const cells = sample.map((row) => row[i] ?? '').filter((cell) => cell.trim() !== '');
    return cells.length > 0 && cells.every((cell) => outcomeOf(cell) !== null);
  });
  return found >= 0 ? found : null;
}

export interface Refused {
  /** The row as a spreadsheet numbers it (the header is row 1). */
  row: number;
  address: string;
  why: string;
}

export interface FeedbackRows {
  events: Array<{ email: string; outcome: Outcome }>;
  refused: Refused[];
  counts: Record<Outcome, number>;
}

export function feedbackRows(read: ReadFile, addressColumn: number, outcomeColumn: number): FeedbackRows {
  const first = read.hasHeader ? 2 : 1;
  const events: FeedbackRows['events'] = [];
  const refused: Refused[] = [];
  const counts: Record<Outcome, number> = { hard_bounce: 0, soft_bounce: 0, delivered: 0, complaint: 0 };
  read.rows.forEach((row, index) => {
    const address = (row[addressColumn] ?? '').trim();
    const cell = (row[outcomeColumn] ?? '').trim();
    const outcome = outcomeOf(cell);
    const refuse = (why: string) => refused.push({ row: index + first, address, why });
    if (address === '') refuse('no address');
    else if (!looksLikeAddress(address)) refuse('not an e-mail address');
    else if (outcome === null)
      refuse(cell === '' ? 'no outcome' : `"${cell.slice(0, 40)}" is not an outcome (hard_bounce, soft_bounce, delivered, complaint)`);
    else {
      events.push({ email: address, outcome });
      counts[outcome] += 1;
    }
  });
  return { events, refused, counts };
}

/** The events in calls the door takes. */
export function chunks<T>(items: readonly T[], size = EVENTS_PER_CALL): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
