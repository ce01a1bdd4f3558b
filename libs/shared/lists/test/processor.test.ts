/**
 * The list processor's recovery paths, on the memory store and meter with a scripted engine: a
 * job run again records and bills nothing twice, a crash between recording and queueing retries
 * is repaired by the job's next run, lost jobs are queued again by the janitor, and a job that
 * fails for good fails its list with its callback handed over once.
 */
import { describe, expect, it } from 'vitest';
import type { VerifyOutcome, VerifyResult } from '@svc/contracts';
import { MemoryListStore, type ListQueue, type QueuedListJob } from '../src/index.ts';
import { RecordingCallbackDispatcher, verifyResult } from '@svc/testkit';
import { MemoryMeter } from '@svc/metering';
import { ListProcessor, type VerifyFn } from '../src/processor.ts';
import { newList } from './support/new-list.ts';

const acceptedResult = (email: string): VerifyResult => verifyResult(email);
const accepted = (email: string): VerifyOutcome => ({ result: acceptedResult(email), temporary: false });
const greylisted = (email: string, retryAfterSeconds?: number): VerifyOutcome => ({
  result: { ...acceptedResult(email), verdict: 'risky', reason: 'greylisted', score: 40 },
  temporary: true,
  ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
});

class RecordingQueue implements ListQueue {
  readonly jobs: QueuedListJob[] = [];
  failNext = false;
  add(jobs: QueuedListJob[]): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      return Promise.reject(new Error('Redis went away'));
    }
    this.jobs.push(...jobs);
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

async function setup(verify: VerifyFn, now = () => 1_000_000) {
  const store = new MemoryListStore(now);
  const queue = new RecordingQueue();
  const meter = new MemoryMeter();
  const dispatcher = new RecordingCallbackDispatcher();
  const processor = new ListProcessor({
    store,
    queue,
    meter,
    verify,
    dispatcher,
    retryDelaysS: [60],
    retentionMs: 86_400_000,
    chunkDeadlineMs: 5_000,
    janitorGraceMs: 0,
    stallMs: 0,
    now,
  });
  const id = 'lst_00000000000000000000000a';
  await store.create(newList({ id, callbackUrl: 'https://hooks.example.com/' }), [
    [
      [0, 'a@x.test', 1],
      [1, 'b@x.test', 1],
      [2, 'c@x.test', 1],
    ],
  ]);
  return { store, queue, meter, dispatcher, processor, id, signal: new AbortController().signal };
}

describe('list processor', () => {
  it('a chunk job run again probes and bills nothing twice', async () => {
    const probed: string[] = [];
    const { store, meter, processor, id, signal, dispatcher } = await setup((emails) => {
      probed.push(...emails);
      return Promise.resolve(emails.map(accepted));
    });
    await processor.handle({ kind: 'chunk', listId: id, chunk: 0 }, signal);
    await processor.handle({ kind: 'chunk', listId: id, chunk: 0 }, signal);
    expect(probed).toEqual(['a@x.test', 'b@x.test', 'c@x.test']);
    expect(await store.get(id)).toMatchObject({ status: 'completed', processed: 3, finished: true });
    expect(await meter.ledger(`list:${id}`, 'key')).toEqual({ units: 1, billableUnits: 1 });
    expect(dispatcher.events.map((event) => event.type)).toEqual(['list.completed']);
  });

  it('a list cancelled while its chunk is probed: the next session is refused and the chunk aborted, nothing recorded or billed', async () => {
    const gate: { opened?: boolean; refused?: unknown; aborted?: boolean } = {};
    const { store, meter, processor, id, signal, dispatcher } = await setup(async (emails, options) => {
      await options.beforeSession(); // the first session: the list is running
      gate.opened = true;
      await store.end(id, 'cancelled', 1_000_000, 'evt_cancelled');
      gate.refused = await options.beforeSession().catch((error: unknown) => error);
      gate.aborted = options.signal.aborted;
      return emails.map(accepted); // an answer after the cancel is dropped
    });
    await processor.handle({ kind: 'chunk', listId: id, chunk: 0 }, signal);
    expect(gate).toEqual({ opened: true, refused: new Error('list ended before this session'), aborted: true });
    expect(await store.get(id)).toMatchObject({ status: 'cancelled', processed: 0, finished: true });
    expect(await meter.ledger(`list:${id}`, 'key')).toEqual({ units: 0, billableUnits: 0 });
    expect(dispatcher.events.map((event) => event.type)).toEqual(['list.cancelled']);
  });

  it('a crash between recording and queueing the retry is repaired when the job runs again', async () => {
    let clock = 1_000_000;
    const { store, queue, processor, id, signal } = await setup(
      (emails) => Promise.resolve(emails.map((email) => (email === 'b@x.test' ? greylisted(email) : accepted(email)))),
      () => clock,
    );
    queue.failNext = true;
    await expect(processor.handle({ kind: 'chunk', listId: id, chunk: 0 }, signal)).rejects.toThrow('Redis went away');
    expect(await store.get(id)).toMatchObject({ status: 'retrying', processed: 2 });
    clock += 20_000; // the job is taken up again 20 s later
    await processor.handle({ kind: 'chunk', listId: id, chunk: 0 }, signal);
    expect(queue.jobs).toEqual([{ job: { kind: 'retry', listId: id, chunk: 0, round: 1 }, delayMs: 40_000 }]);
  });

  it('the janitor queues again the work of a list whose jobs were lost', async () => {
    const { store, queue, processor, id, signal } = await setup((emails) => Promise.resolve(emails.map((email) => greylisted(email))));
    await store.markEnqueued(id);
    await processor.sweep();
    expect(queue.jobs.map(({ job }) => job)).toEqual([{ kind: 'chunk', listId: id, chunk: 0 }]);
    queue.jobs.length = 0;
    await processor.handle({ kind: 'chunk', listId: id, chunk: 0 }, signal);
    queue.jobs.length = 0; // as if the retry job had been lost
    await processor.sweep();
    expect(queue.jobs).toEqual([{ job: { kind: 'retry', listId: id, chunk: 0, round: 1 }, delayMs: 60_000 }]);
  });

  it('a throttled address is retried after its back-off as often as it takes (retryDelaysS has one round), then settles with its real verdict', async () => {
    let clock = 1_000_000;
    let throttledRounds = 0;
    const throttled = (email: string): VerifyOutcome => ({
      result: { ...acceptedResult(email), verdict: 'risky', reason: 'throttled', score: 50 },
      temporary: true,
      retryAfterSeconds: 120,
    });
    const { store, queue, processor, id, signal } = await setup(
      (emails) =>
        Promise.resolve(emails.map((email) => (email === 'b@x.test' && throttledRounds++ < 3 ? throttled(email) : accepted(email)))),
      () => clock,
    );
    await processor.handle({ kind: 'chunk', listId: id, chunk: 0 }, signal);
    for (let round = 1; round <= 3; round++) {
      expect(await store.get(id)).toMatchObject({ status: 'retrying', processed: 2 });
      expect(queue.jobs.at(-1)).toEqual({ job: { kind: 'retry', listId: id, chunk: 0, round }, delayMs: 120_000 });
      clock += 120_000;
      await processor.handle({ kind: 'retry', listId: id, chunk: 0, round }, signal);
    }
    expect(await store.get(id)).toMatchObject({
      status: 'completed',
      processed: 3,
      summary: { deliverable: 3, risky: 0, undeliverable: 0 },
    });
  });

  it('a retry waits for the delay the server asked for, when it named one', async () => {
    const { queue, processor, id, signal } = await setup((emails) => Promise.resolve(emails.map((email) => greylisted(email, 120))));
    await processor.handle({ kind: 'chunk', listId: id, chunk: 0 }, signal);
    expect(queue.jobs).toEqual([{ job: { kind: 'retry', listId: id, chunk: 0, round: 1 }, delayMs: 120_000 }]);
  });

  it('the janitor queues a list created but never queued, and finishes one that ended unfinished', async () => {
    const { store, queue, processor, id, dispatcher } = await setup((emails) => Promise.resolve(emails.map(accepted)));
    await processor.sweep();
    expect(queue.jobs.map(({ job }) => job)).toEqual([{ kind: 'chunk', listId: id, chunk: 0 }]);
    expect((await store.get(id))?.enqueued).toBe(true);
    await store.end(id, 'cancelled', 1_000_000, 'evt_cancel');
    await processor.sweep();
    await processor.sweep();
    expect(dispatcher.events.map((event) => [event.type, event.id])).toEqual([['list.cancelled', 'evt_cancel']]);
    expect(await store.unfinished()).toEqual([]);
  });

  it('a job that fails for good fails its list, keeping what it recorded', async () => {
    const { store, processor, id, dispatcher } = await setup((emails) => Promise.resolve(emails.map(accepted)));
    await processor.failJob({ kind: 'chunk', listId: id, chunk: 0 }, new Error('poison'));
    expect(await store.get(id)).toMatchObject({ status: 'failed', error: expect.stringContaining('failed') });
    expect(JSON.parse(dispatcher.events[0]!.body)).toMatchObject({ status: 'failed', event: 'list.failed', error: expect.any(String) });
  });
});
