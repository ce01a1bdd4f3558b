/**
 * The list store: every state change of a list is one atomic step here (a Lua script in Redis,
 * synchronous code in memory), so that gateways and workers racing on one list, and jobs run
 * again after a crash, never record an entry twice nor lose one.
 */
import type { ListStatus } from '@svc/contracts';
import type { Commit, CommitOutcome, InputRow, ListRecord, NewList, RetryGroup, RetryMark, StoredResult, WorkItem } from './model.ts';

export interface ListPage {
  records: ListRecord[];
  next: string | null;
}

export interface ChunkProgress {
  settled: Set<number>;
  retries: Map<number, RetryMark>;
}

export interface PendingWork {
  /** Work chunks whose first pass is recorded. */
  chunksDone: Set<number>;
  retryGroups: RetryGroup[];
}

export interface ListStore {
  // --- creation (gateway) ---
  /**
   * Holds one of the key's `max` active-list slots for `listId` while its upload is read; false
   * when all are taken. An unconfirmed hold lapses after `holdMs` (a gateway that died mid-upload).
   */
  reserve(keyId: string, listId: string, max: number, now: number, holdMs: number): Promise<boolean>;
  /** Staged input rows: invisible until `create`, dropped by `discard` (or on their own after a day). */
  putInput(listId: string, chunk: number, rows: InputRow[]): Promise<void>;
  create(list: NewList, work: WorkItem[][]): Promise<void>;
  /** Rows of the key's lists whose data is still kept (the storage quota): every row of each, duplicates included. */
  storedRows(keyId: string): Promise<number>;
  discard(listId: string, keyId: string): Promise<void>;
  markEnqueued(listId: string): Promise<void>;

  // --- reading ---
  get(listId: string): Promise<ListRecord | undefined>;
  /** The key's lists, newest first. */
  page(keyId: string, limit: number, cursor: string | undefined): Promise<ListPage>;
  inputChunk(listId: string, chunk: number): Promise<InputRow[]>;
  /** Each distinct address's result, if settled; its `email` may be empty (the reader takes the row's own spelling). */
  results(listId: string, indices: number[]): Promise<Array<StoredResult | undefined>>;

  // --- work (workers) ---
  /** A queued list is `running` from its first job on. */
  markRunning(listId: string, now: number): Promise<void>;
  workChunk(listId: string, chunk: number): Promise<WorkItem[]>;
  progress(listId: string, indices: number[]): Promise<ChunkProgress>;
  /** Records settled results and retry marks, moves the status; ends the list when all settled. */
  commit(listId: string, commit: Commit): Promise<CommitOutcome>;
  /**
   * `finish`: a `retrying` list settles every address waiting for a retry as its last result
   * (risky, with the reason it waited for) and completes; any other list is left as it is.
   * Answers the record as it is afterwards.
   */
  settleWaiting(listId: string, now: number, eventId: string): Promise<ListRecord | undefined>;
  /** Ends an active list as `cancelled` or `failed`; answers the record as it is afterwards. */
  end(
    listId: string,
    status: Extract<ListStatus, 'cancelled' | 'failed'>,
    now: number,
    eventId: string,
    error?: string,
  ): Promise<ListRecord | undefined>;
  /**
   * Takes the right to hand the list's end event over, for `leaseMs`: false while another
   * process holds it or once it was handed over. A holder that dies lets the lease lapse.
   */
  claimCallback(listId: string, now: number, leaseMs: number): Promise<boolean>;
  markCallbackQueued(listId: string): Promise<void>;
  /** After the end was handled: the list's data expires `retentionMs` later. */
  finish(listId: string, retentionMs: number): Promise<void>;
  /** What is left to queue for an active list: chunks without a first pass, retries waiting. */
  pendingWork(listId: string): Promise<PendingWork>;
  /** Notes that the list's work was queued again now. */
  touch(listId: string, now: number): Promise<void>;
  /** Lists not yet finished (active, or ended with their end not yet handled). */
  unfinished(): Promise<string[]>;
  /** Drops an id from the unfinished set (its data is gone). */
  forget(listId: string): Promise<void>;
}
