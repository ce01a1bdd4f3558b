/**
 * The API's answers the console reads, checked field by field (docs/api.md has the shapes). The
 * list object's type is the contract's own (@svc/contracts, the zod schema the gateway answers
 * with), imported as a type only: the bundler erases it, so the console carries no zod, and a
 * field the contract changes breaks the console's type check instead of drifting from it.
 */
import type { ListObject, ListStatus } from '@svc/contracts';
import { isRecord } from './is-record.ts';

export type { ListObject };

export interface UsageRow {
  operation: string;
  calls: number;
  billableCalls: number;
  freeRemaining: number;
  costUsd: string;
  /** Where the API gives them: list addresses processed (calls are their units of 100), the unit price, the month's allowance it draws on. */
  addresses?: number;
  priceUsd?: string;
  freeAllowance?: number;
}

/**
 * Every status of the contract, each once: a status the contract adds or drops fails the type
 * check here (a Record needs every key and takes no other).
 */
const STATUSES: Readonly<Record<ListStatus, boolean>> = {
  queued: false,
  running: false,
  retrying: false,
  completed: true,
  cancelled: true,
  failed: true,
};
const isStatus = (value: unknown): value is ListStatus => typeof value === 'string' && Object.hasOwn(STATUSES, value);

/** Statuses a list never leaves (the contract's ENDED_STATUSES, which sit beside its zod schemas). */
export const ENDED: ReadonlySet<ListStatus> = new Set(
  Object.entries(STATUSES).flatMap(([status, ended]) => (ended && isStatus(status) ? [status] : [])),
);

class Shape extends Error {
  constructor(what: string) {
    super(`The service answered something unexpected (${what}).`);
  }
}

const record = (value: unknown, what: string): Record<string, unknown> => {
  if (!isRecord(value)) throw new Shape(what);
  return value;
};
const text = (value: unknown, what: string): string => {
  if (typeof value !== 'string') throw new Shape(what);
  return value;
};
const count = (value: unknown, what: string): number => {
  if (typeof value !== 'number') throw new Shape(what);
  return value;
};

/** The numeric entries of a record (reason → count). */
const counts = (value: Record<string, unknown>): Record<string, number> =>
  Object.fromEntries(Object.entries(value).filter((entry): entry is [string, number] => typeof entry[1] === 'number'));

const status = (value: unknown): ListStatus => {
  if (!isStatus(value)) throw new Shape('status');
  return value;
};
const timeOrNull = (value: unknown, what: string): string | null => (value === null || value === undefined ? null : text(value, what));

export function readList(value: unknown): ListObject {
  const list = record(value, 'list');
  const summary = record(list.summary, 'summary');
  const column = isRecord(list.column) ? list.column : undefined;
  return {
    id: text(list.id, 'id'),
    name: list.name === null ? null : text(list.name, 'name'),
    status: status(list.status),
    count: count(list.count, 'count'),
    distinct: count(list.distinct, 'distinct'),
    processed: count(list.processed, 'processed'),
    summary: {
      deliverable: count(summary.deliverable, 'deliverable'),
      risky: count(summary.risky, 'risky'),
      undeliverable: count(summary.undeliverable, 'undeliverable'),
    },
    costUsd: text(list.costUsd, 'costUsd'),
    createdAt: text(list.createdAt, 'createdAt'),
    startedAt: timeOrNull(list.startedAt, 'startedAt'),
    completedAt: timeOrNull(list.completedAt, 'completedAt'),
    ...(typeof list.error === 'string' ? { error: list.error } : {}),
    // The header is null for a file without a header row: the column is still reported, by its index.
    ...(column === undefined
      ? {}
      : {
          column: {
            index: count(column.index, 'column.index'),
            header: column.header === null ? null : text(column.header, 'column.header'),
          },
        }),
    ...(typeof list.encoding === 'string' ? { encoding: list.encoding } : {}),
    ...(typeof list.waiting === 'number' ? { waiting: list.waiting } : {}),
    ...(isRecord(list.waitingReasons) ? { waitingReasons: counts(list.waitingReasons) } : {}),
    ...(typeof list.nextRetryAt === 'string' ? { nextRetryAt: list.nextRetryAt } : {}),
    ...(typeof list.estimatedCompletionAt === 'string' ? { estimatedCompletionAt: list.estimatedCompletionAt } : {}),
  };
}

/** A page of the key's lists, newest first, and the cursor of the next (older) page, if any. */
export function readListPage(value: unknown): { lists: ListObject[]; nextCursor: string | null } {
  const page = record(value, 'page');
  if (!Array.isArray(page.lists)) throw new Shape('lists');
  const nextCursor = page.nextCursor === null || page.nextCursor === undefined ? null : text(page.nextCursor, 'nextCursor');
  return { lists: page.lists.map(readList), nextCursor };
}

export function readUsage(value: unknown): { period: string; rows: UsageRow[]; totalCostUsd: string } {
  const usage = record(value, 'usage');
  const operations = record(usage.operations, 'operations');
  // Each free allowance once, with the operations drawing on it (batches and lists share one).
  const allowances = Array.isArray(usage.allowances) ? usage.allowances.filter(isRecord) : [];
  const allowanceOf = (operation: string): number | undefined => {
    const found = allowances.find((entry) => Array.isArray(entry.operations) && entry.operations.includes(operation));
    return typeof found?.allowance === 'number' ? found.allowance : undefined;
  };
  const rows = Object.entries(operations).map(([operation, raw]) => {
    const row = record(raw, operation);
    return {
      operation,
      calls: count(row.calls, 'calls'),
      billableCalls: count(row.billableCalls, 'billableCalls'),
      freeRemaining: count(row.freeRemaining, 'freeRemaining'),
      costUsd: text(row.costUsd, 'costUsd'),
      ...(typeof row.addresses === 'number' ? { addresses: row.addresses } : {}),
      ...(typeof row.priceUsd === 'string' ? { priceUsd: row.priceUsd } : {}),
      ...(allowanceOf(operation) === undefined ? {} : { freeAllowance: allowanceOf(operation) }),
    };
  });
  return { period: text(usage.period, 'period'), rows, totalCostUsd: text(usage.totalCostUsd, 'totalCostUsd') };
}
