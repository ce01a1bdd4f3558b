/**
 * The work of a list, one job at a time, through the same engine as the batch route:
 * - a chunk's first pass probes its distinct addresses (sorted by domain at upload, so they share
 *   sessions) and records each settled result once;
 * - temporary answers (greylisting, timeouts) get a retry mark and a delayed retry job per chunk
 *   and round, probed on fresh sessions; after the last configured delay they settle as they are;
 * - addresses no server was asked about before a pass's deadline (`unasked`: they waited for a
 *   session slot behind the list's other chunks at the same server) are passed again at once in
 *   the same round, a bounded number of times (`verifyChunk`): no retry mark, no retry round;
 * - after each job the list's due units are billed (idempotent: the meter's ledger counts the
 *   units a list already paid), and a list that ended is finished: billed, its callback handed
 *   over once, its data set to expire.
 * Every step can run again after a crash and record nothing twice. The janitor finishes what a
 * crash left between steps (a list ended but not finished, a list created but never queued).
 */
import { randomUUID } from 'node:crypto';
import { isEnded, type ListStatus, type VerifyOptions, type VerifyOutcome } from '@svc/contracts';
import { linkedSignal } from '@svc/jobs';
import { billingPeriod, costOf, listUnits, type Meter } from '@svc/metering';
import type { Logger } from '@svc/telemetry';
import type { CallbackDispatcher, ListEventType } from '@svc/webhooks';
import { ledgerOf, toListObject, type ListRecord, type NewRetryMark, type RetryMark, type SettledEntry } from './model.ts';
import { chunkJobs, type ListJob, type ListQueue, type QueuedListJob } from './queue.ts';
import { mayRetry, retryDelayMs } from './retry-delay.ts';
import type { ListStore } from './store.ts';

/**
 * The verify engine, called for a chunk's due addresses: each result with whether it was
 * temporary and the delay a server asked for. `beforeSession` is the list's gate: the engine
 * asks it once a session slot is granted, before the session opens.
 */
export type VerifyFn = (emails: string[], options: Required<Omit<VerifyOptions, 'onSettled'>>) => Promise<VerifyOutcome[]>;

export interface ListProcessorDeps {
  store: ListStore;
  queue: ListQueue;
  meter: Meter;
  verify: VerifyFn;
  /** Hands the end-of-list event over for delivery; absent, no callback is sent. */
  dispatcher?: CallbackDispatcher;
  retryDelaysS: readonly number[];
  retentionMs: number;
  /**
   * How long one pass over a chunk may probe before its open addresses count as timeouts (those
   * that waited the whole pass for a session are passed again: `verifyChunk`).
   */
  chunkDeadlineMs: number;
  /** Further passes over addresses no server was asked about before their deadline (default UNASKED_PASSES). */
  unaskedPasses?: number;
  /** How often a chunk being probed checks whether its list was cancelled. */
  cancelPollMs?: number;
  /** How old an unfinished state must be before the janitor repairs it. */
  janitorGraceMs?: number;
  /** How long an active list may go without progress before the janitor queues its work again. */
  stallMs?: number;
  logger?: Logger;
  now?: () => number;
}

export const FAILED_MESSAGE = 'Verification of this list failed unexpectedly; the results recorded so far are kept and billed.';

const CALLBACK_LEASE_MS = 60_000;
/**
 * Passes over a chunk's unasked addresses after its first (each up to `chunkDeadlineMs`): with the
 * default 30 s deadline, a chunk waits at most 4.5 minutes for its server, under the janitor's
 * 10-minute stall; past that its addresses take the retry rounds as other temporary answers.
 */
export const UNASKED_PASSES = 8;
const indicesUnasked = (results: VerifyOutcome[]): number[] => results.flatMap((outcome, i) => (outcome.unasked === true ? [i] : []));
const newEventId = (): string => `evt_${randomUUID()}`;
const eventType = (status: ListStatus): ListEventType =>
  status === 'cancelled' ? 'list.cancelled' : status === 'failed' ? 'list.failed' : 'list.completed';

export class ListProcessor {
  private readonly now: () => number;

  constructor(private readonly deps: ListProcessorDeps) {
    this.now = deps.now ?? Date.now;
  }

  readonly handle = async (job: ListJob, signal: AbortSignal): Promise<void> => {
    const record = await this.deps.store.get(job.listId);
    if (record === undefined) return; // expired, or an upload that never completed
    if (job.kind === 'finish' || isEnded(record.status)) return this.finish(record.id);
    const round = job.kind === 'retry' ? job.round : 0;
    if (record.status === 'queued') await this.deps.store.markRunning(record.id, this.now());
    const items = await this.deps.store.workChunk(record.id, job.chunk);
    const progress = await this.deps.store.progress(
      record.id,
      items.map(([index]) => index),
    );
    const due = items.filter(([index]) => !progress.settled.has(index) && (progress.retries.get(index)?.round ?? 0) === round);

    const settled: SettledEntry[] = [];
    const retries: NewRetryMark[] = [];
    if (due.length > 0) {
      const cancelled = new AbortController();
      const stopWatching = this.watchForEnd(record.id, cancelled);
      // Released after the chunk: `signal` may live as long as the process (the embedded queue's shutdown).
      const linked = linkedSignal([signal, cancelled.signal]);
      let results: VerifyOutcome[];
      try {
        results = await this.verifyChunk(
          record.id,
          cancelled,
          due.map(([, address]) => address),
          () => ({
            deadlineAt: this.now() + this.deps.chunkDeadlineMs,
            signal: linked.signal,
            beforeSession: () => this.stillActive(record.id, cancelled),
            keyId: record.keyId,
            // A retry round asks again on a connection of its own, never a parked one.
            freshConnection: round > 0,
          }),
        );
      } finally {
        linked.release();
        stopWatching();
      }
      // Shutting down: what was cut short is not an answer; the job is taken up again.
      signal.throwIfAborted();
      // Cancelled meanwhile: sessions were cut, nothing is recorded or billed.
      if (cancelled.signal.aborted) return this.finish(record.id);
      const at = this.now();
      const sinceStart = at - (record.startedAt ?? record.createdAt);
      due.forEach(([index, , entries], i) => {
        const outcome = results[i]!;
        const { result, retryAfterSeconds } = outcome;
        if (mayRetry(outcome, round, this.deps.retryDelaysS, sinceStart)) {
          const dueAt = at + retryDelayMs(round + 1, this.deps.retryDelaysS, retryAfterSeconds);
          // What `finish` settles it as: risky, with the reason it waits for.
          retries.push({ index, round: round + 1, dueAt, entries, result: { ...result, verdict: 'risky' } });
        } else settled.push({ index, entries, result });
      });
    }
    const outcome = await this.deps.store.commit(record.id, {
      now: this.now(),
      chunk: job.chunk,
      round,
      settled,
      retries,
      eventId: newEventId(),
    });
    if (outcome.applied) {
      await this.scheduleRetries(record.id, job.chunk, round, progress.retries, retries);
      await this.bill(record.id);
    }
    if (isEnded(outcome.status)) await this.finish(record.id);
  };

  /**
   * One pass over the chunk's due addresses, then, at once and in the same round, further passes
   * over those no server was asked about (`unasked`: the deadline came while their session
   * waited for a slot behind the list's other chunks at the same server). Such a timeout says
   * nothing of the server, so it spends no retry round and waits for no retry delay. Each pass
   * has a deadline of its own and at most `unaskedPasses` follow the first, so a chunk never waits
   * for ever: what is still unasked after them is a temporary answer as any other (a retry mark).
   */
  private async verifyChunk(
    listId: string,
    cancelled: AbortController,
    emails: string[],
    pass: () => Parameters<VerifyFn>[1],
  ): Promise<VerifyOutcome[]> {
    const results = await this.deps.verify(emails, pass());
    let unasked = indicesUnasked(results);
    for (let again = 0; again < (this.deps.unaskedPasses ?? UNASKED_PASSES) && unasked.length > 0; again++) {
      const options = pass();
      if (options.signal.aborted) break;
      // A list cancelled meanwhile gets no further pass (the watch may not have seen it yet).
      const current = await this.deps.store.get(listId);
      if (current === undefined || isEnded(current.status)) {
        cancelled.abort(new Error('list ended'));
        break;
      }
      const retried = await this.deps.verify(
        unasked.map((i) => emails[i]!),
        options,
      );
      unasked.forEach((i, k) => (results[i] = retried[k]!));
      unasked = unasked.filter((_, k) => retried[k]!.unasked === true);
    }
    return results;
  }

  /**
   * Opens no session for a list that ended (cancelled) since its chunk began: the list is read
   * again once a slot is granted, and the chunk's verify is aborted when it ended.
   */
  private async stillActive(listId: string, controller: AbortController): Promise<void> {
    const current = await this.deps.store.get(listId);
    if (current !== undefined && !isEnded(current.status)) return;
    controller.abort(new Error('list ended'));
    throw new Error('list ended before this session');
  }

  /** Aborts `controller` when the list ends (cancelled) while its addresses are being probed. */
  private watchForEnd(listId: string, controller: AbortController): () => void {
    const timer = setInterval(() => {
      this.deps.store.get(listId).then(
        (current) => {
          if (current === undefined || isEnded(current.status)) controller.abort(new Error('list ended'));
        },
        () => undefined,
      );
    }, this.deps.cancelPollMs ?? 1_000);
    return () => clearInterval(timer);
  }

  /** One delayed job per later round with marks in this chunk (again after a crash: ids dedupe). */
  private async scheduleRetries(
    listId: string,
    chunk: number,
    round: number,
    earlier: Map<number, RetryMark>,
    added: Array<{ index: number } & RetryMark>,
  ): Promise<void> {
    const dueByRound = new Map<number, number>();
    for (const mark of [...earlier.values(), ...added]) {
      if (mark.round <= round) continue;
      dueByRound.set(mark.round, Math.min(dueByRound.get(mark.round) ?? Infinity, mark.dueAt));
    }
    if (dueByRound.size === 0) return;
    const now = this.now();
    await this.deps.queue.add(
      [...dueByRound].map(([retryRound, dueAt]) => ({
        job: { kind: 'retry', listId, chunk, round: retryRound },
        delayMs: Math.max(0, dueAt - now),
      })),
    );
  }

  /** Bills the units the list's settled addresses have started (none twice). */
  private async bill(listId: string): Promise<void> {
    const record = await this.deps.store.get(listId);
    if (record === undefined || record.settled === 0) return;
    await this.deps.meter.recordUnits(
      ledgerOf(listId),
      record.keyId,
      'email-verify.list',
      billingPeriod(new Date(this.now())),
      record.allowance,
      listUnits(record.settled),
      record.settled,
    );
  }

  /** Handles a list's end once: bill what is due, hand the callback over, set retention. */
  async finish(listId: string): Promise<void> {
    await this.bill(listId);
    const record = await this.deps.store.get(listId);
    if (record === undefined || record.finished || !isEnded(record.status)) return;
    const dispatcher = this.deps.dispatcher;
    if (record.callbackUrl !== null && !record.callbackQueued && dispatcher !== undefined) {
      // One process hands the event over; if it dies before marking it, the lease lapses and the
      // janitor hands it over again with the same event id (receivers deduplicate by it).
      if (!(await this.deps.store.claimCallback(listId, this.now(), CALLBACK_LEASE_MS))) return;
      await dispatcher.enqueue(await this.endEvent(record, record.callbackUrl));
      await this.deps.store.markCallbackQueued(listId);
    }
    await this.deps.store.finish(listId, this.deps.retentionMs);
    this.deps.logger?.info({ list: listId, status: record.status, count: record.count }, 'list ended');
  }

  private async endEvent(record: ListRecord, url: string) {
    const ledger = await this.deps.meter.ledger(ledgerOf(record.id), record.keyId);
    const type = eventType(record.status);
    return {
      // The id is fixed when the list ends, so an event handed over again after a crash is the same event.
      id: record.eventId ?? `evt_${record.id}`,
      type,
      keyId: record.keyId,
      url,
      body: JSON.stringify({ ...toListObject(record, costOf('email-verify.list', ledger.billableUnits)), event: type }),
    };
  }

  /** A job that failed for good: the list fails, keeping (and billing) what it recorded. */
  readonly failJob = async (job: ListJob, error: unknown): Promise<void> => {
    this.deps.logger?.error({ err: error, list: job.listId, job: job.kind }, 'list job failed for good');
    const record = await this.deps.store.end(job.listId, 'failed', this.now(), newEventId(), FAILED_MESSAGE);
    if (record !== undefined) await this.finish(record.id);
  };

  /** Repairs what a crash left between two steps. Safe to run in every worker at once. */
  async sweep(): Promise<void> {
    const grace = this.deps.janitorGraceMs ?? 30_000;
    for (const id of await this.deps.store.unfinished()) {
      const record = await this.deps.store.get(id);
      if (record === undefined) await this.deps.store.forget(id);
      else if (isEnded(record.status)) {
        if (this.now() - (record.completedAt ?? 0) >= grace) await this.finish(id);
      } else if (!record.enqueued && this.now() - record.createdAt >= grace) {
        await this.deps.queue.add(chunkJobs(id, record.workChunks));
        await this.deps.store.markEnqueued(id);
      } else if (record.enqueued && this.now() - record.touchedAt >= (this.deps.stallMs ?? 10 * 60_000)) {
        await this.requeue(id, record.workChunks);
      }
    }
  }

  /**
   * Queues again what an active list still has to do (a job lost with a Redis that died before
   * writing it to disk). Jobs still queued are not doubled: their ids are the same.
   */
  private async requeue(listId: string, workChunks: number): Promise<void> {
    const pending = await this.deps.store.pendingWork(listId);
    const now = this.now();
    const jobs: QueuedListJob[] = chunkJobs(listId, workChunks).filter(
      ({ job }) => job.kind === 'chunk' && !pending.chunksDone.has(job.chunk),
    );
    for (const group of pending.retryGroups) {
      jobs.push({ job: { kind: 'retry', listId, chunk: group.chunk, round: group.round }, delayMs: Math.max(0, group.dueAt - now) });
    }
    await this.deps.queue.add(jobs);
    await this.deps.store.touch(listId, now);
    if (jobs.length > 0) this.deps.logger?.warn({ list: listId, jobs: jobs.length }, 'list without progress: its work was queued again');
  }

  /** Runs `sweep` every `intervalMs` (with jitter) until stopped. */
  startJanitor(intervalMs: number): () => void {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const tick = () => {
      timer = setTimeout(
        () => {
          this.sweep()
            .catch((error: unknown) => this.deps.logger?.warn({ err: error }, 'list janitor failed'))
            .finally(() => {
              if (!stopped) tick();
            });
        },
        intervalMs * (0.75 + Math.random() / 2),
      );
      timer.unref();
    };
    tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }
}
