/**
 * Distributed mode's list store. Keys, under the deployment's prefix `<p>`:
 *   <p>:list:{<id>}              hash   the list record (counters, status, times, layout)
 *   <p>:list:{<id>}:input        hash   input chunk number -> deflated JSON rows, in input order
 *   <p>:list:{<id>}:work         hash   work chunk number -> deflated JSON [distinct index, address, entries]
 *   <p>:list:{<id>}:results      hash   distinct index -> "<settle sequence>:<shape number>"
 *   <p>:list:{<id>}:shapes       hash   shape number -> compact result, and "h<64 bits of its SHA-1>" -> number
 *                                       (a digest, not the result again: a list whose every address has
 *                                       a domain of its own has a shape per row; two shapes of one list
 *                                       sharing 64 bits is about 1 in 10^9 for 100,000 shapes)
 *   <p>:list:{<id>}:retries      hash   distinct index -> "round:dueAtMs:entries:shape:reason", while a retry is due
 *                                       (shape: its last result, what `finish` settles it as; the
 *                                       record's `w:<reason>` fields count the entries waiting)
 *   <p>:list:{<id>}:chunks       set    work chunks whose first pass is recorded
 *   <p>:list:{<id>}:groups       zset   "chunk:round" -> due time, per retry job still to run
 *   <p>:lists:key:{<keyId>}      zset   the key's lists by creation time (listing, newest first)
 *   <p>:lists:active:{<keyId>}   zset   list id -> hold expiry (+inf once created): active-list slots
 *   <p>:lists:{unfinished}       set    lists whose end is not yet handled (the janitor's work)
 *   <p>:lists:rows:{<keyId>}     hash   list id -> rows stored (the storage quota, storedRows)
 * State changes are Lua scripts: a result is recorded once (HSETNX-like check), and a commit
 * that arrives after the list was cancelled records nothing. What a row costs is kept small
 * (stored-encoding.ts): at most about 100 bytes of Redis a row, duplicates included.
 *
 * Redis Cluster: a list's keys carry its id as hash tag, a key's sets its key id, and a list id
 * is drawn in its key's slot (list-id.ts), so every script and transaction below touches one
 * slot. Only the janitor's set is apart (a tag of its own: one set for the deployment); it is never
 * in a script or transaction with a list's keys, which would be a CROSSSLOT error on a Cluster:
 * it is written by single commands, before a list exists and after it is finished, and the
 * janitor reads it alone and tolerates an id whose list is gone.
 */
import { readFileSync } from 'node:fs';
import { LIST_STATUSES, isEnded, verifyResultSchema, type ListStatus, type VerifyResult } from '@svc/contracts';
import type { Redis } from '@svc/jobs/redis';
import { z } from 'zod';
import type { Commit, CommitOutcome, CsvLayout, InputRow, ListRecord, NewList, RetryMark, StoredResult, WorkItem } from './model.ts';
import { decodeCursor, encodeCursor } from './rules.ts';
import { packChunk, parseResultField, resultOfShape, shapeOf, unpackChunk } from './stored-encoding.ts';
import type { ChunkProgress, ListPage, ListStore, PendingWork } from './store.ts';

/** A script of the lua/ folder beside this module, read once at load (the build copies the folder beside the compiled files). */
const lua = (name: string): string => readFileSync(new URL(`./lua/${name}`, import.meta.url), 'utf8');

/** Staged input of an upload that never completed goes away on its own. */
const STAGING_TTL_S = 86_400;
/** The key's rows index outlives any list it names (a list's data is kept 7 days after it ends); refreshed at each list. */
const ROWS_INDEX_TTL_S = 60 * 86_400;

/** What a list counts against its key's storage quota: every row, duplicates and rows without an address included. */
export const storedRowsOf = (list: Pick<NewList, 'count' | 'layout'>): number => list.count + (list.layout.skipped ?? 0);

const RESERVE = lua('list-reserve.lua');

/** Leaves the status as nextStatus() in rules.ts decides; frees the key's slot past running. */
const MOVE = lua('list-move.lua');

/**
 * KEYS: record, active slots, results, retries, chunks, retry groups, shapes. ARGV: now, chunk,
 * round (0: first pass), event id, settled count n, then n x (index, entries, verdict, result
 * shape), then per retry (index, round, due, entries, result shape, reason).
 */
const COMMIT = MOVE + lua('list-commit.lua');

/**
 * `finish`: KEYS: record, active slots, results, retries, retry groups. ARGV: now, event id. A
 * retrying list settles each waiting address as its last result (risky) and completes.
 */
const SETTLE_WAITING = MOVE + lua('list-settle-waiting.lua');

/** KEYS: record, active slots. ARGV: status, now, event id, error. */
const END = MOVE + lua('list-end.lua');

/** KEYS: record. ARGV: now. */
const MARK_RUNNING = lua('list-mark-running.lua');

/** KEYS: record. ARGV: now, lease until. */
const CLAIM_CALLBACK = lua('list-claim-callback.lua');

type ListRedis = Redis & {
  listMarkRunning(record: string, now: number): Promise<number>;
  listClaimCallback(record: string, now: number, until: number): Promise<number>;
  listReserve(key: string, id: string, max: number, now: number, until: number): Promise<number>;
  listCommitShapes(...args: Array<string | number>): Promise<[string, number]>;
  listEnd(record: string, active: string, status: string, now: number, eventId: string, error: string): Promise<number>;
  listSettleWaiting(
    record: string,
    active: string,
    results: string,
    retries: string,
    groups: string,
    now: number,
    eventId: string,
  ): Promise<number>;
};

const layoutSchema = z.object({
  columns: z.array(z.string()),
  addressColumn: z.number().int(),
  delimiter: z.enum([',', ';', '\t']),
  bom: z.boolean(),
  encoding: z.string().optional(),
  headerRow: z.boolean().optional(),
  skipped: z.number().int().optional(),
});
const inputRowsSchema = z.array(z.tuple([z.number().int()], z.string()));
const workItemsSchema = z.array(z.tuple([z.number().int(), z.string(), z.number().int()]));

export class RedisListStore implements ListStore {
  private readonly redis: ListRedis;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    if (!('listReserve' in redis)) redis.defineCommand('listReserve', { numberOfKeys: 1, lua: RESERVE });
    if (!('listCommitShapes' in redis)) redis.defineCommand('listCommitShapes', { numberOfKeys: 7, lua: COMMIT });
    if (!('listEnd' in redis)) redis.defineCommand('listEnd', { numberOfKeys: 2, lua: END });
    if (!('listSettleWaiting' in redis)) redis.defineCommand('listSettleWaiting', { numberOfKeys: 5, lua: SETTLE_WAITING });
    if (!('listMarkRunning' in redis)) redis.defineCommand('listMarkRunning', { numberOfKeys: 1, lua: MARK_RUNNING });
    if (!('listClaimCallback' in redis)) redis.defineCommand('listClaimCallback', { numberOfKeys: 1, lua: CLAIM_CALLBACK });
    this.redis = redis as ListRedis;
  }

  private key(listId: string, part?: 'input' | 'work' | 'results' | 'shapes' | 'retries' | 'chunks' | 'groups'): string {
    return part === undefined ? `${this.prefix}:list:{${listId}}` : `${this.prefix}:list:{${listId}}:${part}`;
  }

  private byKey = (keyId: string): string => `${this.prefix}:lists:key:{${keyId}}`;
  private active = (keyId: string): string => `${this.prefix}:lists:active:{${keyId}}`;
  private rows = (keyId: string): string => `${this.prefix}:lists:rows:{${keyId}}`;
  private get unfinishedKey(): string {
    return `${this.prefix}:lists:{unfinished}`;
  }

  async reserve(keyId: string, listId: string, max: number, now: number, holdMs: number): Promise<boolean> {
    return (await this.redis.listReserve(this.active(keyId), listId, max, now, now + holdMs)) === 1;
  }

  async putInput(listId: string, chunk: number, rows: InputRow[]): Promise<void> {
    await this.redis
      .multi()
      .hset(this.key(listId, 'input'), String(chunk), packChunk(rows))
      .expire(this.key(listId, 'input'), STAGING_TTL_S)
      .exec();
  }

  async create(list: NewList, work: WorkItem[][]): Promise<void> {
    const fields: Record<string, string | number> = {
      id: list.id,
      keyId: list.keyId,
      name: list.name ?? '',
      hasName: list.name === null ? 0 : 1,
      status: 'queued',
      count: list.count,
      distinct: list.distinct,
      inputChunks: list.inputChunks,
      workChunks: list.workChunks,
      processed: 0,
      settled: 0,
      's:deliverable': 0,
      's:risky': 0,
      's:undeliverable': 0,
      createdAt: list.createdAt,
      touchedAt: list.createdAt,
      callbackUrl: list.callbackUrl ?? '',
      allowance: list.allowance,
      layout: JSON.stringify(list.layout),
    };
    // Before the list exists (another slot than the transaction's): the janitor then finds it.
    await this.redis.sadd(this.unfinishedKey, list.id);
    const multi = this.redis.multi();
    for (let start = 0; start < work.length; start += 500) {
      const slice = Object.fromEntries(work.slice(start, start + 500).map((items, offset) => [String(start + offset), packChunk(items)]));
      multi.hset(this.key(list.id, 'work'), slice);
    }
    await multi
      .persist(this.key(list.id, 'input'))
      .hset(this.key(list.id), fields)
      .zadd(this.byKey(list.keyId), list.createdAt, list.id)
      .zadd(this.active(list.keyId), '+inf', list.id)
      .hset(this.rows(list.keyId), list.id, storedRowsOf(list))
      .expire(this.rows(list.keyId), ROWS_INDEX_TTL_S)
      .exec();
  }

  async storedRows(keyId: string): Promise<number> {
    const rows = await this.redis.hgetall(this.rows(keyId));
    const ids = Object.keys(rows);
    if (ids.length === 0) return 0;
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.exists(this.key(id));
    const exists = (await pipeline.exec()) ?? [];
    // A list whose data expired (or was deleted) no longer counts, and leaves the index.
    const gone = ids.filter((_, i) => exists[i]?.[1] !== 1);
    if (gone.length > 0) await this.redis.hdel(this.rows(keyId), ...gone);
    return ids.reduce((sum, id, i) => (exists[i]?.[1] === 1 ? sum + Number(rows[id]) : sum), 0);
  }

  async discard(listId: string, keyId: string): Promise<void> {
    await this.redis.multi().del(this.key(listId, 'input')).zrem(this.active(keyId), listId).exec();
  }

  async markEnqueued(listId: string): Promise<void> {
    await this.redis.hset(this.key(listId), 'enqueued', 1);
  }

  async get(listId: string): Promise<ListRecord | undefined> {
    const [fields, first, last] = await Promise.all([
      this.redis.hgetall(this.key(listId)),
      this.redis.zrange(this.key(listId, 'groups'), 0, 0, 'WITHSCORES'),
      this.redis.zrange(this.key(listId, 'groups'), -1, -1, 'WITHSCORES'),
    ]);
    const record = toRecord(fields);
    if (record === undefined) return undefined;
    const byReason: Record<string, number> = {};
    for (const [field, value] of Object.entries(fields)) if (field.startsWith('w:')) byReason[field.slice(2)] = Math.max(0, Number(value));
    const lastRound = Number(last[0]?.split(':')[1]);
    return {
      ...record,
      waiting: {
        byReason,
        next: first[1] === undefined ? null : Number(first[1]),
        last: last[1] === undefined || !Number.isFinite(lastRound) ? null : { dueAt: Number(last[1]), round: lastRound },
      },
    };
  }

  async page(keyId: string, limit: number, cursor: string | undefined): Promise<ListPage> {
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const records: ListRecord[] = [];
    const gone: string[] = [];
    // Newest first; members of equal score come in reverse id order, as the cursor expects.
    let offset = 0;
    const max = after === undefined ? '+inf' : String(after.at);
    while (records.length <= limit) {
      const ids = await this.redis.zrange(this.byKey(keyId), max, '-inf', 'BYSCORE', 'REV', 'LIMIT', offset, limit + 1);
      if (ids.length === 0) break;
      offset += ids.length;
      const pipeline = this.redis.pipeline();
      for (const id of ids) pipeline.hgetall(this.key(id));
      const rows = (await pipeline.exec()) ?? [];
      ids.forEach((id, i) => {
        const record = toRecord((rows[i]?.[1] ?? {}) as Record<string, string>);
        if (record === undefined) gone.push(id);
        else if (after === undefined || record.createdAt < after.at || record.id < after.id) records.push(record);
      });
    }
    // Lists whose data expired after their retention leave the index lazily.
    if (gone.length > 0) await this.redis.zrem(this.byKey(keyId), ...gone);
    const page = records.slice(0, limit);
    const last = page.at(-1);
    return { records: page, next: records.length > limit && last !== undefined ? encodeCursor(last.createdAt, last.id) : null };
  }

  async inputChunk(listId: string, chunk: number): Promise<InputRow[]> {
    const raw = await this.redis.hgetBuffer(this.key(listId, 'input'), String(chunk));
    return raw === null ? [] : inputRowsSchema.parse(unpackChunk(raw));
  }

  async results(listId: string, indices: number[]): Promise<Array<StoredResult | undefined>> {
    if (indices.length === 0) return [];
    const raw = await this.redis.hmget(this.key(listId, 'results'), ...indices.map(String));
    const fields = raw.map((value) => (value === null ? undefined : parseResultField(value)));
    const shapeIds = [...new Set(fields.flatMap((field) => (field !== undefined && 'shape' in field ? [String(field.shape)] : [])))];
    const shapes = new Map<string, VerifyResult | undefined>();
    if (shapeIds.length > 0) {
      const stored = await this.redis.hmget(this.key(listId, 'shapes'), ...shapeIds);
      // The address is the reader's (each entry under its own spelling, list-results.ts): not stored.
      shapeIds.forEach((id, i) => shapes.set(id, stored[i] === null ? undefined : resultOfShape(stored[i]!, '')));
    }
    return fields.map((field) => {
      if (field === undefined) return undefined;
      const result = 'shape' in field ? shapes.get(String(field.shape)) : verifyResultSchema.parse(field.result);
      if (result === undefined) throw new Error(`list ${listId}: a stored result names a shape it does not hold`);
      return { seq: field.seq, result };
    });
  }

  async markRunning(listId: string, now: number): Promise<void> {
    await this.redis.listMarkRunning(this.key(listId), now);
  }

  async workChunk(listId: string, chunk: number): Promise<WorkItem[]> {
    const raw = await this.redis.hgetBuffer(this.key(listId, 'work'), String(chunk));
    return raw === null ? [] : workItemsSchema.parse(unpackChunk(raw));
  }

  async progress(listId: string, indices: number[]): Promise<ChunkProgress> {
    const settled = new Set<number>();
    const retries = new Map<number, RetryMark>();
    if (indices.length === 0) return { settled, retries };
    const fields = indices.map(String);
    const [done, marks] = await Promise.all([
      this.redis.hmget(this.key(listId, 'results'), ...fields),
      this.redis.hmget(this.key(listId, 'retries'), ...fields),
    ]);
    indices.forEach((index, i) => {
      if (done[i] !== null) settled.add(index);
      const mark = /^(\d+):(\d+)(?::|$)/.exec(marks[i] ?? '');
      if (mark !== null) retries.set(index, { round: Number(mark[1]), dueAt: Number(mark[2]) });
    });
    return { settled, retries };
  }

  async commit(listId: string, commit: Commit): Promise<CommitOutcome> {
    const keyId = await this.redis.hget(this.key(listId), 'keyId');
    if (keyId === null) return { status: 'failed', applied: false };
    const args: Array<string | number> = [
      this.key(listId),
      this.active(keyId),
      this.key(listId, 'results'),
      this.key(listId, 'retries'),
      this.key(listId, 'chunks'),
      this.key(listId, 'groups'),
      this.key(listId, 'shapes'),
      commit.now,
      commit.chunk,
      commit.round,
      commit.eventId,
      commit.settled.length,
    ];
    for (const settled of commit.settled) args.push(settled.index, settled.entries, settled.result.verdict, shapeOf(settled.result));
    for (const retry of commit.retries)
      args.push(retry.index, retry.round, retry.dueAt, retry.entries, shapeOf(retry.result), retry.result.reason);
    const [status, applied] = await this.redis.listCommitShapes(...args);
    return { status: parseStatus(status), applied: applied === 1 };
  }

  async settleWaiting(listId: string, now: number, eventId: string): Promise<ListRecord | undefined> {
    const keyId = await this.redis.hget(this.key(listId), 'keyId');
    if (keyId === null) return undefined;
    await this.redis.listSettleWaiting(
      this.key(listId),
      this.active(keyId),
      this.key(listId, 'results'),
      this.key(listId, 'retries'),
      this.key(listId, 'groups'),
      now,
      eventId,
    );
    return this.get(listId);
  }

  async end(listId: string, status: 'cancelled' | 'failed', now: number, eventId: string, error?: string): Promise<ListRecord | undefined> {
    const keyId = await this.redis.hget(this.key(listId), 'keyId');
    if (keyId === null) return undefined;
    await this.redis.listEnd(this.key(listId), this.active(keyId), status, now, eventId, error ?? '');
    return this.get(listId);
  }

  async claimCallback(listId: string, now: number, leaseMs: number): Promise<boolean> {
    return (await this.redis.listClaimCallback(this.key(listId), now, now + leaseMs)) === 1;
  }

  async markCallbackQueued(listId: string): Promise<void> {
    await this.redis.hset(this.key(listId), 'callbackQueued', 1);
  }

  async finish(listId: string, retentionMs: number): Promise<void> {
    const seconds = Math.ceil(retentionMs / 1_000);
    const multi = this.redis.multi().hset(this.key(listId), 'finished', 1);
    // What the results are read from stays for the retention; the working data (the addresses
    // to probe, retry marks, chunks done) has no reader once the list ended: deleted, not kept
    // for days (a 2,000-address list's :work was about a fifth of its memory, issue 32). A job
    // of the list still queued finds no work and finishes the list again (idempotent).
    for (const part of [undefined, 'input', 'results', 'shapes'] as const) multi.expire(this.key(listId, part), seconds);
    multi.del(this.key(listId, 'work'), this.key(listId, 'retries'), this.key(listId, 'chunks'), this.key(listId, 'groups'));
    await multi.exec();
    // After, and apart (another slot): a crash in between only has the janitor finish it again.
    await this.redis.srem(this.unfinishedKey, listId);
  }

  async pendingWork(listId: string): Promise<PendingWork> {
    const [done, groups] = await Promise.all([
      this.redis.smembers(this.key(listId, 'chunks')),
      this.redis.zrange(this.key(listId, 'groups'), 0, -1, 'WITHSCORES'),
    ]);
    const retryGroups = [];
    for (let i = 0; i + 1 < groups.length; i += 2) {
      const [chunk, round] = groups[i]!.split(':').map(Number);
      retryGroups.push({ chunk: chunk!, round: round!, dueAt: Number(groups[i + 1]) });
    }
    return { chunksDone: new Set(done.map(Number)), retryGroups };
  }

  async touch(listId: string, now: number): Promise<void> {
    await this.redis.hset(this.key(listId), 'touchedAt', now);
  }

  async unfinished(): Promise<string[]> {
    return this.redis.smembers(this.unfinishedKey);
  }

  async forget(listId: string): Promise<void> {
    await this.redis.srem(this.unfinishedKey, listId);
  }
}

function parseStatus(value: string): ListStatus {
  const status = LIST_STATUSES.find((candidate) => candidate === value);
  if (status === undefined) throw new Error(`unknown list status ${value}`);
  return status;
}

const numberOr = (value: string | undefined, fallback: number | null): number | null =>
  value === undefined || value === '' ? fallback : Number(value);

function toRecord(fields: Record<string, string>): ListRecord | undefined {
  if (fields.id === undefined || fields.status === undefined) return undefined;
  const status = parseStatus(fields.status);
  return {
    id: fields.id,
    keyId: fields.keyId ?? '',
    name: fields.hasName === '1' ? (fields.name ?? '') : null,
    status,
    count: Number(fields.count),
    distinct: Number(fields.distinct),
    inputChunks: Number(fields.inputChunks),
    workChunks: Number(fields.workChunks),
    processed: Number(fields.processed ?? 0),
    settled: Number(fields.settled ?? 0),
    summary: {
      deliverable: Number(fields['s:deliverable'] ?? 0),
      risky: Number(fields['s:risky'] ?? 0),
      undeliverable: Number(fields['s:undeliverable'] ?? 0),
    },
    createdAt: Number(fields.createdAt),
    touchedAt: Number(fields.touchedAt ?? fields.createdAt),
    startedAt: numberOr(fields.startedAt, null),
    completedAt: isEnded(status) ? numberOr(fields.completedAt, null) : null,
    error: fields.error === undefined || fields.error === '' ? null : fields.error,
    callbackUrl: fields.callbackUrl === undefined || fields.callbackUrl === '' ? null : fields.callbackUrl,
    allowance: Number(fields.allowance ?? 0),
    layout: layoutSchema.parse(JSON.parse(fields.layout ?? '{}')) satisfies CsvLayout,
    eventId: fields.eventId ?? null,
    enqueued: fields.enqueued === '1',
    finished: fields.finished === '1',
    callbackQueued: fields.callbackQueued === '1',
  };
}
