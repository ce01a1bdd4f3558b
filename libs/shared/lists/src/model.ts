/**
 * What a list is made of in storage. An upload becomes:
 * - input rows, in input order, in chunks of INPUT_CHUNK_ROWS: `[distinctIndex, ...cells]`, the
 *   address being `cells[addressColumn]` (a JSON upload has one cell, the address);
 * - distinct addresses (duplicates after trimming and lower-casing the whole address are one: dedupKey), sorted by
 *   domain so that a work chunk's addresses share SMTP sessions, in work chunks of
 *   WORK_CHUNK_SIZE: `[distinctIndex, address, entries]`;
 * - one result per distinct address once it settles, numbered in the order they settled, so that
 *   a reader can take a consistent snapshot (results numbered up to the list's `settled` count);
 * - a retry mark per distinct address waiting for its next attempt: the round and when it is due.
 */
import { LIST_UNIT_SIZE, formatUsd, isEnded, type ListObject, type ListStatus, type VerifyResult } from '@svc/contracts';

export const INPUT_CHUNK_ROWS = 1_000;
/**
 * 98, not the billing unit's 100 (units are counted from processed addresses, not chunks): a chunk
 * of one domain plus that domain's two controls (a random local part and postmaster) fits one
 * SMTP transaction (RFC 5321 guarantees 100 recipients), so it takes one session, not two.
 */
export const WORK_CHUNK_SIZE = LIST_UNIT_SIZE - 2;

/** A row of the upload: `distinctIndex` is NO_ADDRESS for a row whose address cell is empty or missing. */
export type InputRow = [distinctIndex: number, ...cells: string[]];
export const NO_ADDRESS = -1;
export type WorkItem = [distinctIndex: number, address: string, entries: number];

export interface StoredResult {
  /** Position in the order results settled (1-based). */
  seq: number;
  result: VerifyResult;
}

export interface RetryMark {
  /** The attempt this address waits for: 1 for the first retry. */
  round: number;
  dueAt: number;
}

/** A retry mark as a commit records it: also what the address would settle as if its list is finished now. */
export interface NewRetryMark extends RetryMark {
  index: number;
  /** Entries of the list carrying this address. */
  entries: number;
  /** Its last (temporary) result, `risky` with the reason it waits for: what `finish` settles it as. */
  result: VerifyResult;
}

/** What waits for a retry, as the list object says it (decisions "List verification"). */
export interface Waiting {
  /** Entries waiting, by the reason they wait for (`greylisted`, `timeout`, ...). */
  byReason: Record<string, number>;
  /** The earliest and the latest retry scheduled (with its round), if any. */
  next: number | null;
  last: { dueAt: number; round: number } | null;
}

/** Retries of one work chunk waiting for the same round: one retry job does them. */
export interface RetryGroup {
  chunk: number;
  round: number;
  dueAt: number;
}

export interface Summary {
  deliverable: number;
  risky: number;
  undeliverable: number;
}

/** Output layout of CSV results: the uploaded header, which cell is the address, how it was written. */
export interface CsvLayout {
  columns: string[];
  addressColumn: number;
  delimiter: ',' | ';' | '\t';
  /** The results start with a UTF-8 byte-order mark. */
  bom: boolean;
  /** CSV uploads only: the encoding the file was read in (`utf-8`, `utf-16le`, `windows-1252`, ...). */
  encoding?: string;
  /** CSV uploads only: the first row was a header (else `columns` are made up and the address column has no header). */
  headerRow?: boolean;
  /** Rows without an address: kept in the CSV results, not entries of the list. */
  skipped?: number;
}

export interface ListRecord {
  id: string;
  keyId: string;
  name: string | null;
  status: ListStatus;
  count: number;
  distinct: number;
  inputChunks: number;
  workChunks: number;
  /** Entries settled (duplicates included) and distinct addresses settled. */
  processed: number;
  settled: number;
  summary: Summary;
  createdAt: number;
  /** Last progress (or repair): a list untouched for long gets its work queued again. */
  touchedAt: number;
  startedAt: number | null;
  completedAt: number | null;
  error: string | null;
  callbackUrl: string | null;
  /** The key's batch free allowance when the list was created: its units draw on it. */
  allowance: number;
  layout: CsvLayout;
  /** Id of the event sent when the list ended. */
  eventId: string | null;
  /** The work chunks were handed to the queue. */
  enqueued: boolean;
  /** The end was handled: units billed, callback handed over, retention set. */
  finished: boolean;
  callbackQueued: boolean;
  /** What waits for a retry (read with the record; absent where a store does not say). */
  waiting?: Waiting;
}

/** A new list as the gateway writes it. */
export type NewList = Omit<
  ListRecord,
  | 'status'
  | 'touchedAt'
  | 'processed'
  | 'settled'
  | 'summary'
  | 'startedAt'
  | 'completedAt'
  | 'error'
  | 'eventId'
  | 'enqueued'
  | 'finished'
  | 'callbackQueued'
  | 'waiting'
>;

export interface SettledEntry {
  index: number;
  /** How many entries of the list carry this address. */
  entries: number;
  result: VerifyResult;
}

export interface Commit {
  now: number;
  /** The work chunk of the job, and its pass: 0 for the first, else the retry round. */
  chunk: number;
  round: number;
  settled: SettledEntry[];
  retries: NewRetryMark[];
  /** Id for the list's end event, used if this commit ends the list. */
  eventId: string;
}

export interface CommitOutcome {
  status: ListStatus;
  /** False when the list had ended before (cancelled): nothing was recorded. */
  applied: boolean;
}

export const ledgerOf = (listId: string): string => `list:${listId}`;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** What the list object says of a CSV upload: the address column (from 1, as `?column=` counts) and the encoding read. */
function csvSource(layout: CsvLayout): Pick<ListObject, 'column' | 'encoding'> {
  if (layout.encoding === undefined) return {};
  const header = layout.headerRow === false ? null : (layout.columns[layout.addressColumn] ?? null);
  return { column: { index: layout.addressColumn + 1, header }, encoding: layout.encoding };
}

/** What the list object says of a list that is not over: what waits and when, and when it should end. */
function progressOf(
  record: ListRecord,
  timing: ListTiming | undefined,
): Pick<ListObject, 'waiting' | 'waitingReasons' | 'nextRetryAt' | 'estimatedCompletionAt'> {
  if (isEnded(record.status) || timing === undefined) return {};
  const out: Pick<ListObject, 'waiting' | 'waitingReasons' | 'nextRetryAt' | 'estimatedCompletionAt'> = {};
  const reasons = Object.fromEntries(Object.entries(record.waiting?.byReason ?? {}).filter(([, entries]) => entries > 0));
  const waiting = Object.values(reasons).reduce((sum, entries) => sum + entries, 0);
  if (waiting > 0 || record.status === 'retrying') {
    out.waiting = waiting;
    out.waitingReasons = reasons;
    if (record.waiting?.next != null) out.nextRetryAt = new Date(record.waiting.next).toISOString();
  }
  const eta = estimatedCompletion(record, timing);
  if (eta !== undefined) out.estimatedCompletionAt = new Date(eta).toISOString();
  return out;
}

/** What the time estimates need: now, and the configured retry delays (`LIST_RETRY_DELAYS_S`). */
export interface ListTiming {
  now: number;
  retryDelaysS: readonly number[];
}

/**
 * When a running list should end: at the rate its entries settled so far for what is left of
 * the first pass, and no earlier than its last scheduled retry plus the delays of the rounds
 * after it (an address greylisted again waits for the next one). Unknown before anything settled.
 */
export function estimatedCompletion(record: ListRecord, { now, retryDelaysS }: ListTiming): number | undefined {
  if (record.status !== 'running' && record.status !== 'retrying') return undefined;
  let eta: number | undefined;
  const started = record.startedAt ?? record.createdAt;
  const waitingEntries = Object.values(record.waiting?.byReason ?? {}).reduce((sum, entries) => sum + Math.max(0, entries), 0);
  const firstPassLeft = record.count - record.processed - waitingEntries;
  if (record.status === 'running' && firstPassLeft > 0 && record.processed + waitingEntries > 0)
    eta = now + ((now - started) * firstPassLeft) / (record.processed + waitingEntries);
  else if (firstPassLeft <= 0) eta = now;
  const last = record.waiting?.last;
  if (last != null) {
    const later = retryDelaysS.slice(last.round).reduce((sum, seconds) => sum + seconds * 1_000, 0);
    eta = Math.max(eta ?? now, last.dueAt + later);
  }
  return eta;
}

/** The list object of `record`, which has cost `costMicroUsd` so far (@svc/metering prices its billed units). */
export function toListObject(record: ListRecord, costMicroUsd: number, timing?: ListTiming): ListObject {
  return {
    id: record.id,
    name: record.name,
    status: record.status,
    count: record.count,
    distinct: record.distinct,
    processed: record.processed,
    summary: { ...record.summary },
    costUsd: formatUsd(costMicroUsd),
    createdAt: new Date(record.createdAt).toISOString(),
    startedAt: iso(record.startedAt),
    completedAt: iso(record.completedAt),
    ...(record.error === null ? {} : { error: record.error }),
    ...csvSource(record.layout),
    ...progressOf(record, timing),
  };
}
