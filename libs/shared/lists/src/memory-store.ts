/**
 * Embedded mode's list store: the same rules as the Redis store, in this process's memory
 * (lost on restart, as everything of embedded mode). Each method runs to completion without
 * awaiting, which makes it as atomic as a Lua script.
 */
import { isEnded, type ListStatus, type VerifyResult } from '@svc/contracts';
import type { Commit, CommitOutcome, InputRow, ListRecord, NewList, RetryMark, StoredResult, Waiting, WorkItem } from './model.ts';
import { decodeCursor, encodeCursor, nextStatus } from './rules.ts';
import type { ChunkProgress, ListPage, ListStore, PendingWork } from './store.ts';

interface Entry {
  record: ListRecord;
  work: WorkItem[][];
  results: Map<number, StoredResult>;
  retries: Map<number, RetryMark & { entries: number; result: VerifyResult }>;
  chunksDone: Set<number>;
  /** `chunk:round` -> earliest due time. */
  retryGroups: Map<string, number>;
  expiresAt: number;
  callbackClaim: number;
}

export class MemoryListStore implements ListStore {
  private readonly lists = new Map<string, Entry>();
  private readonly inputs = new Map<string, InputRow[][]>();
  private readonly slots = new Map<string, Map<string, number>>();
  private readonly unfinishedIds = new Set<string>();

  constructor(private readonly clock: () => number = Date.now) {}

  reserve(keyId: string, listId: string, max: number, now: number, holdMs: number): Promise<boolean> {
    const slots = this.slotsOf(keyId);
    for (const [id, until] of slots) if (until <= now) slots.delete(id);
    if (slots.size >= max) return Promise.resolve(false);
    slots.set(listId, now + holdMs);
    return Promise.resolve(true);
  }

  private slotsOf(keyId: string): Map<string, number> {
    let slots = this.slots.get(keyId);
    if (slots === undefined) {
      slots = new Map();
      this.slots.set(keyId, slots);
    }
    return slots;
  }

  putInput(listId: string, chunk: number, rows: InputRow[]): Promise<void> {
    const chunks = this.inputs.get(listId) ?? [];
    chunks[chunk] = rows;
    this.inputs.set(listId, chunks);
    return Promise.resolve();
  }

  create(list: NewList, work: WorkItem[][]): Promise<void> {
    const record: ListRecord = {
      ...list,
      status: 'queued',
      touchedAt: list.createdAt,
      processed: 0,
      settled: 0,
      summary: { deliverable: 0, risky: 0, undeliverable: 0 },
      startedAt: null,
      completedAt: null,
      error: null,
      eventId: null,
      enqueued: false,
      finished: false,
      callbackQueued: false,
    };
    this.lists.set(list.id, {
      record,
      work,
      results: new Map(),
      retries: new Map(),
      chunksDone: new Set(),
      retryGroups: new Map(),
      expiresAt: Infinity,
      callbackClaim: 0,
    });
    this.slotsOf(list.keyId).set(list.id, Infinity);
    this.unfinishedIds.add(list.id);
    return Promise.resolve();
  }

  storedRows(keyId: string): Promise<number> {
    let rows = 0;
    for (const id of [...this.lists.keys()]) {
      const record = this.entry(id)?.record; // an expired list is dropped here
      if (record?.keyId === keyId) rows += record.count + (record.layout.skipped ?? 0);
    }
    return Promise.resolve(rows);
  }

  discard(listId: string, keyId: string): Promise<void> {
    this.inputs.delete(listId);
    this.slotsOf(keyId).delete(listId);
    return Promise.resolve();
  }

  markEnqueued(listId: string): Promise<void> {
    const entry = this.entry(listId);
    if (entry !== undefined) entry.record.enqueued = true;
    return Promise.resolve();
  }

  private entry(listId: string): Entry | undefined {
    const entry = this.lists.get(listId);
    if (entry !== undefined && entry.expiresAt <= this.clock()) {
      this.lists.delete(listId);
      this.inputs.delete(listId);
      return undefined;
    }
    return entry;
  }

  get(listId: string): Promise<ListRecord | undefined> {
    const entry = this.entry(listId);
    return Promise.resolve(entry === undefined ? undefined : { ...structuredClone(entry.record), waiting: waitingOf(entry) });
  }

  page(keyId: string, limit: number, cursor: string | undefined): Promise<ListPage> {
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const mine = [...this.lists.keys()]
      .map((id) => this.entry(id)?.record)
      .filter((record): record is ListRecord => record?.keyId === keyId)
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
      .filter((record) => after === undefined || record.createdAt < after.at || (record.createdAt === after.at && record.id < after.id));
    const records = mine.slice(0, limit).map((record) => structuredClone(record));
    const last = records.at(-1);
    return Promise.resolve({ records, next: mine.length > limit && last !== undefined ? encodeCursor(last.createdAt, last.id) : null });
  }

  inputChunk(listId: string, chunk: number): Promise<InputRow[]> {
    return Promise.resolve(this.entry(listId) === undefined ? [] : (this.inputs.get(listId)?.[chunk] ?? []));
  }

  results(listId: string, indices: number[]): Promise<Array<StoredResult | undefined>> {
    const entry = this.entry(listId);
    return Promise.resolve(indices.map((index) => entry?.results.get(index)));
  }

  markRunning(listId: string, now: number): Promise<void> {
    const record = this.entry(listId)?.record;
    if (record?.status === 'queued') {
      record.status = 'running';
      record.startedAt = now;
      record.touchedAt = now;
    }
    return Promise.resolve();
  }

  workChunk(listId: string, chunk: number): Promise<WorkItem[]> {
    return Promise.resolve(this.entry(listId)?.work[chunk] ?? []);
  }

  progress(listId: string, indices: number[]): Promise<ChunkProgress> {
    const entry = this.entry(listId);
    const settled = new Set<number>();
    const retries = new Map<number, RetryMark>();
    for (const index of indices) {
      if (entry?.results.has(index)) settled.add(index);
      const mark = entry?.retries.get(index);
      if (mark !== undefined) retries.set(index, { round: mark.round, dueAt: mark.dueAt });
    }
    return Promise.resolve({ settled, retries });
  }

  commit(listId: string, commit: Commit): Promise<CommitOutcome> {
    const entry = this.entry(listId);
    if (entry === undefined) return Promise.resolve({ status: 'failed', applied: false });
    const record = entry.record;
    if (isEnded(record.status)) return Promise.resolve({ status: record.status, applied: false });
    if (record.status === 'queued') {
      record.status = 'running';
      record.startedAt = commit.now;
    }
    record.touchedAt = commit.now;
    for (const settled of commit.settled) {
      if (entry.results.has(settled.index)) continue;
      record.settled += 1;
      entry.results.set(settled.index, { seq: record.settled, result: settled.result });
      entry.retries.delete(settled.index);
      record.processed += settled.entries;
      record.summary[settled.result.verdict] += settled.entries;
    }
    for (const { index, round, dueAt, entries, result } of commit.retries) {
      if (entry.results.has(index)) continue;
      entry.retries.set(index, { round, dueAt, entries, result });
      const group = `${commit.chunk}:${round}`;
      entry.retryGroups.set(group, Math.min(entry.retryGroups.get(group) ?? Infinity, dueAt));
    }
    if (commit.round === 0) entry.chunksDone.add(commit.chunk);
    else entry.retryGroups.delete(`${commit.chunk}:${commit.round}`);
    this.move(record, nextStatus(record, entry.chunksDone.size), commit.now, commit.eventId);
    return Promise.resolve({ status: record.status, applied: true });
  }

  private move(record: ListRecord, status: ListStatus, now: number, eventId: string): void {
    if (status === record.status) return;
    record.status = status;
    // Only queued and running lists hold one of the key's active-list slots.
    if (status !== 'running') this.slotsOf(record.keyId).delete(record.id);
    if (isEnded(status)) {
      record.completedAt = now;
      record.eventId = eventId;
    }
  }

  settleWaiting(listId: string, now: number, eventId: string): Promise<ListRecord | undefined> {
    const entry = this.entry(listId);
    if (entry === undefined) return Promise.resolve(undefined);
    const record = entry.record;
    if (record.status === 'retrying') {
      for (const [index, mark] of entry.retries) {
        if (entry.results.has(index)) continue;
        record.settled += 1;
        entry.results.set(index, { seq: record.settled, result: mark.result });
        record.processed += mark.entries;
        record.summary[mark.result.verdict] += mark.entries;
      }
      entry.retries.clear();
      entry.retryGroups.clear();
      this.move(record, 'completed', now, eventId);
    }
    return this.get(listId);
  }

  end(listId: string, status: 'cancelled' | 'failed', now: number, eventId: string, error?: string): Promise<ListRecord | undefined> {
    const entry = this.entry(listId);
    if (entry === undefined) return Promise.resolve(undefined);
    if (!isEnded(entry.record.status)) {
      this.move(entry.record, status, now, eventId);
      if (error !== undefined) entry.record.error = error;
    }
    return Promise.resolve(structuredClone(entry.record));
  }

  claimCallback(listId: string, now: number, leaseMs: number): Promise<boolean> {
    const entry = this.entry(listId);
    if (entry === undefined || entry.record.callbackQueued || entry.callbackClaim > now) return Promise.resolve(false);
    entry.callbackClaim = now + leaseMs;
    return Promise.resolve(true);
  }

  markCallbackQueued(listId: string): Promise<void> {
    const entry = this.entry(listId);
    if (entry !== undefined) entry.record.callbackQueued = true;
    return Promise.resolve();
  }

  finish(listId: string, retentionMs: number): Promise<void> {
    const entry = this.entry(listId);
    if (entry !== undefined) {
      entry.record.finished = true;
      entry.expiresAt = this.clock() + retentionMs;
    }
    this.unfinishedIds.delete(listId);
    return Promise.resolve();
  }

  pendingWork(listId: string): Promise<PendingWork> {
    const entry = this.entry(listId);
    const retryGroups = [...(entry?.retryGroups ?? [])].map(([group, dueAt]) => {
      const [chunk, round] = group.split(':').map(Number);
      return { chunk: chunk!, round: round!, dueAt };
    });
    return Promise.resolve({ chunksDone: new Set(entry?.chunksDone), retryGroups });
  }

  touch(listId: string, now: number): Promise<void> {
    const record = this.entry(listId)?.record;
    if (record !== undefined) record.touchedAt = now;
    return Promise.resolve();
  }

  unfinished(): Promise<string[]> {
    return Promise.resolve([...this.unfinishedIds]);
  }

  forget(listId: string): Promise<void> {
    this.unfinishedIds.delete(listId);
    return Promise.resolve();
  }
}

/** What waits for a retry in `entry`: entries by reason, the earliest and the latest retry due. */
function waitingOf(entry: Entry): Waiting {
  const byReason: Record<string, number> = {};
  for (const mark of entry.retries.values()) byReason[mark.result.reason] = (byReason[mark.result.reason] ?? 0) + mark.entries;
  let next: number | null = null;
  let last: Waiting['last'] = null;
  for (const [group, dueAt] of entry.retryGroups) {
    if (next === null || dueAt < next) next = dueAt;
    if (last === null || dueAt > last.dueAt) last = { dueAt, round: Number(group.split(':')[1]) };
  }
  return { byReason, next, last };
}
