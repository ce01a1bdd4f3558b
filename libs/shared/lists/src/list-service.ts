/**
 * What the gateway does with lists, shared by the REST routes and the tools: create (hold one of
 * the key's active-list slots, store the upload as it is read, queue its chunks), read, page and
 * cancel. Nothing here probes or bills: the verify-workers do both as they work.
 */
import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ApiError, LIST_ID, invalidParameter, isEnded, type ListObject, type OperationId } from '@svc/contracts';
import { storeUnavailableError, type BackendPart } from '@svc/jobs';
import { allowanceFor, billingPeriod, costOf, freeRemaining, poolCallsIn, type FreeAllowances, type Meter } from '@svc/metering';
import type { Logger } from '@svc/telemetry';
import { checkCallbackUrl } from '@svc/webhooks';
import { ListBuilder } from './list-builder.ts';
import { newListIdFor } from './list-id.ts';
import { ledgerOf, toListObject, type CsvLayout, type ListRecord } from './model.ts';
import { LIST_QUEUE, chunkJobs, type ListQueue } from './queue.ts';
import type { ListStore } from './store.ts';

const OPERATION: OperationId = 'email-verify.list';
/** How long an upload may take before its active-list slot is given back. */
const UPLOAD_HOLD_MS = 10 * 60_000;
/** Rows read between two turns of the event loop while a list is created. */
const YIELD_EVERY_ROWS = 1_000;

export interface ListsDeps {
  store: ListStore;
  queue: ListQueue;
  meter: Meter;
  maxActivePerKey: number;
  /** Storage quota: rows of a key's lists kept at once (LIST_MAX_STORED_ROWS_PER_KEY; its default when absent). */
  maxStoredRowsPerKey?: number;
  freeAllowances: FreeAllowances;
  /** Accept http:// and private callback hosts (test rigs, private deployments). */
  allowPrivateCallbacks: boolean;
  /** `LIST_RETRY_DELAYS_S`: what the list object's `estimatedCompletionAt` counts on for the retries still to come. */
  retryDelaysS?: readonly number[];
}

export interface NewListInput {
  name?: string | undefined;
  callbackUrl?: string | undefined;
  layout: CsvLayout;
  rows: AsyncIterable<string[]> | Iterable<string[]>;
  /** What a CSV upload knows only once its rows were read (its encoding). */
  settle?: () => Partial<CsvLayout>;
}

/** The API key a list belongs to: its id, and the free allowances it has instead of the configured ones. */
export interface ListOwner {
  id: string;
  freeAllowance: Partial<Record<OperationId, number>>;
}

/** Where a list stored but not queued is told (the gateway passes the request's logger). */
export type ListLog = Pick<Logger, 'warn'>;

/** Redis failing is 503, as for every other operation, naming the store that did not answer. */
async function backend<T>(part: BackendPart, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw storeUnavailableError(part, error);
  }
}

const DEFAULT_MAX_STORED_ROWS = 1_000_000;

/** 429 quota_exceeded: the key's stored rows would pass LIST_MAX_STORED_ROWS_PER_KEY. */
export const quotaExceeded = (quota: number, stored: number): ApiError =>
  new ApiError(
    'quota_exceeded',
    `This key's lists hold ${stored} of the ${quota} rows a key may keep stored (LIST_MAX_STORED_ROWS_PER_KEY, duplicates and empty rows included), ` +
      "and this list would pass that quota. Delete lists you no longer need, or wait until old lists' data expires (its retention after they end), then retry.",
    { headers: { 'Retry-After': '3600' }, details: { maxStoredRows: quota, storedRows: stored } },
  );

export class ListService {
  constructor(private readonly deps: ListsDeps) {}

  /** Where results are read from (streamed by the routes, paged by the tools). */
  get store(): ListStore {
    return this.deps.store;
  }

  /** The batch free allowance the key's list units draw on. */
  allowanceOf(key: ListOwner): number {
    return allowanceFor(OPERATION, key.freeAllowance, this.deps.freeAllowances);
  }

  async freeRemaining(key: ListOwner): Promise<number> {
    const usage = await backend('meter', () => this.deps.meter.usage(key.id, billingPeriod()));
    return freeRemaining(this.allowanceOf(key), poolCallsIn(OPERATION, usage));
  }

  checkCallback(url: string | undefined): void {
    if (url === undefined) return;
    const checked = checkCallbackUrl(url, this.deps.allowPrivateCallbacks);
    if (!checked.ok) throw invalidParameter('callbackUrl', checked.message);
  }

  async create(key: ListOwner, input: NewListInput, log: ListLog): Promise<ListObject> {
    this.checkCallback(input.callbackUrl);
    const id = newListIdFor(key.id);
    const now = Date.now();
    const held = await backend('list store', () => this.deps.store.reserve(key.id, id, this.deps.maxActivePerKey, now, UPLOAD_HOLD_MS));
    if (!held) {
      throw new ApiError(
        'rate_limited',
        `This key already has ${this.deps.maxActivePerKey} lists queued or running; wait for one to finish or cancel one, then retry.`,
        { headers: { 'Retry-After': '30' }, details: { maxActiveLists: this.deps.maxActivePerKey } },
      );
    }
    const builder = new ListBuilder(this.deps.store, id, input.layout.addressColumn);
    let workChunks = 0;
    try {
      // Counted before the upload is read and as it is read: rows past the quota are never staged.
      // Two uploads of one key at once may each pass it by one list at most (the active-list cap bounds that).
      const stored = await backend('list store', () => this.deps.store.storedRows(key.id));
      const quota = this.deps.maxStoredRowsPerKey ?? DEFAULT_MAX_STORED_ROWS;
      if (stored >= quota) throw quotaExceeded(quota, stored);
      for await (const row of input.rows) {
        if (stored + builder.count + builder.skipped >= quota) throw quotaExceeded(quota, stored);
        await backend('list store', () => builder.add(row));
        // Let other requests in: reading 100,000 rows otherwise holds the event loop for a second.
        if ((builder.count + builder.skipped) % YIELD_EVERY_ROWS === 0) await nextTurn();
      }
      await backend('list store', () => builder.flush());
      if (builder.count === 0)
        throw new ApiError(
          'invalid_request',
          builder.skipped === 0
            ? 'The list is empty: send 1 to 100000 addresses.'
            : `The list is empty: none of its ${builder.skipped} rows has an address in column ${input.layout.addressColumn + 1}.`,
        );
      const columns = [...input.layout.columns];
      for (let column = columns.length; column < builder.width; column += 1) columns.push(`column_${column + 1}`);
      const work = builder.work();
      workChunks = work.length;
      await backend('list store', () =>
        this.deps.store.create(
          {
            id,
            keyId: key.id,
            name: input.name ?? null,
            count: builder.count,
            distinct: builder.distinct,
            inputChunks: builder.inputChunks,
            workChunks: work.length,
            createdAt: now,
            callbackUrl: input.callbackUrl ?? null,
            allowance: this.allowanceOf(key),
            layout: { ...input.layout, ...input.settle?.(), columns, ...(builder.skipped > 0 ? { skipped: builder.skipped } : {}) },
          },
          work,
        ),
      );
    } catch (error) {
      await this.deps.store.discard(id, key.id).catch(() => undefined);
      throw error;
    }
    try {
      await this.deps.queue.add(chunkJobs(id, workChunks));
      await this.deps.store.markEnqueued(id);
    } catch (error) {
      // The list is stored: the workers' janitor queues it if this did not.
      log.warn({ err: error, list: id, queue: LIST_QUEUE }, 'list stored but not queued; the janitor will queue it');
    }
    return this.object(await this.get(key.id, id));
  }

  /** The key's list, or not_found (another key's list included). */
  async get(keyId: string, listId: string): Promise<ListRecord> {
    const record = LIST_ID.test(listId) ? await backend('list store', () => this.deps.store.get(listId)) : undefined;
    if (record === undefined || record.keyId !== keyId) throw new ApiError('not_found', `No list ${listId} for this key.`);
    return record;
  }

  async object(record: ListRecord): Promise<ListObject> {
    const ledger = await backend('meter', () => this.deps.meter.ledger(ledgerOf(record.id), record.keyId));
    return toListObject(record, costOf(OPERATION, ledger.billableUnits), { now: Date.now(), retryDelaysS: this.deps.retryDelaysS ?? [] });
  }

  async page(keyId: string, limit: number, cursor: string | undefined): Promise<{ lists: ListObject[]; nextCursor: string | null }> {
    const page = await backend('list store', () => this.deps.store.page(keyId, limit, cursor));
    return { lists: await Promise.all(page.records.map((record) => this.object(record))), nextCursor: page.next };
  }

  /**
   * `finish`: a `retrying` list settles its waiting addresses now (each risky, with the reason it
   * waited for) and completes; its end is queued for the workers (billing, callback). Any other
   * list is answered as it is: a running list still has first passes to make.
   */
  async finish(keyId: string, listId: string): Promise<ListObject> {
    const record = await this.get(keyId, listId);
    if (record.status !== 'retrying') return this.object(record);
    const ended = await backend('list store', () => this.deps.store.settleWaiting(listId, Date.now(), `evt_${randomUUID()}`));
    if (ended === undefined) throw new ApiError('not_found', `No list ${listId} for this key.`);
    await this.deps.queue.add([{ job: { kind: 'finish', listId } }]).catch(() => undefined); // else the janitor finishes it
    return this.object(ended);
  }

  /** Cancels an active list (an ended one is answered as it is); its end is queued for the workers. */
  async cancel(keyId: string, listId: string): Promise<ListObject> {
    const record = await this.get(keyId, listId);
    if (isEnded(record.status)) return this.object(record);
    const ended = await backend('list store', () => this.deps.store.end(listId, 'cancelled', Date.now(), `evt_${randomUUID()}`));
    if (ended === undefined) throw new ApiError('not_found', `No list ${listId} for this key.`);
    await this.deps.queue.add([{ job: { kind: 'finish', listId } }]).catch(() => undefined); // else the janitor finishes it
    return this.object(ended);
  }
}
