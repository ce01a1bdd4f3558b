/**
 * Addresses the engine never asked a server about (`unasked`: the pass's deadline came while
 * their session waited for a slot) are passed again at once in the same round, each pass with a
 * deadline of its own; a bounded number of passes, after which they are temporary answers as any
 * other (a retry mark), so a chunk never waits for ever. On the memory store with a scripted
 * engine (the real one: services/verify-worker/test/lists/unasked-chunks-world.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { VerifyOutcome } from '@svc/contracts';
import { MemoryMeter } from '@svc/metering';
import { verifyResult } from '@svc/testkit';
import { MemoryListStore, type ListQueue, type QueuedListJob } from '../src/index.ts';
import { ListProcessor, type VerifyFn } from '../src/processor.ts';
import { newList } from './support/new-list.ts';

const accepted = (email: string): VerifyOutcome => ({ result: verifyResult(email), temporary: false });
const unasked = (email: string): VerifyOutcome => ({
  result: { ...verifyResult(email), verdict: 'risky', reason: 'timeout', score: 40 },
  temporary: true,
  unasked: true,
});

class RecordingQueue implements ListQueue {
  readonly jobs: QueuedListJob[] = [];
  add(jobs: QueuedListJob[]): Promise<void> {
    this.jobs.push(...jobs);
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

async function setup(verify: VerifyFn, clock: { now: number }) {
  const store = new MemoryListStore(() => clock.now);
  const queue = new RecordingQueue();
  const processor = new ListProcessor({
    store,
    queue,
    meter: new MemoryMeter(),
    verify,
    retryDelaysS: [60],
    retentionMs: 86_400_000,
    chunkDeadlineMs: 5_000,
    unaskedPasses: 2,
    now: () => clock.now,
  });
  const id = 'lst_00000000000000000000000u';
  await store.create(newList({ id }), [
    [
      [0, 'a@x.test', 1],
      [1, 'b@x.test', 1],
      [2, 'c@x.test', 1],
    ],
  ]);
  return { store, queue, processor, id };
}

describe('addresses no server was asked about', () => {
  it('are passed again at once, each pass with its own deadline, and settle with their real verdict in round 0', async () => {
    const clock = { now: 1_000_000 };
    const passes: Array<{ emails: string[]; deadlineAt: number }> = [];
    const { store, queue, processor, id } = await setup((emails, options) => {
      passes.push({ emails, deadlineAt: options.deadlineAt });
      clock.now += 5_000; // each pass spends its whole deadline
      // First pass: only a was asked; second: b too; c on the third.
      const asked = new Set(['a@x.test', ...(passes.length >= 2 ? ['b@x.test'] : []), ...(passes.length >= 3 ? ['c@x.test'] : [])]);
      return Promise.resolve(emails.map((email) => (asked.has(email) ? accepted(email) : unasked(email))));
    }, clock);
    await processor.handle({ kind: 'chunk', listId: id, chunk: 0 }, new AbortController().signal);
    expect(passes).toEqual([
      { emails: ['a@x.test', 'b@x.test', 'c@x.test'], deadlineAt: 1_005_000 },
      { emails: ['b@x.test', 'c@x.test'], deadlineAt: 1_010_000 },
      { emails: ['c@x.test'], deadlineAt: 1_015_000 },
    ]);
    expect(queue.jobs).toEqual([]);
    expect(await store.get(id)).toMatchObject({ status: 'completed', processed: 3 });
  });

  it('still unasked after the last pass: a temporary answer, retried in the next round (a chunk never waits for ever)', async () => {
    const clock = { now: 1_000_000 };
    let calls = 0;
    const { store, queue, processor, id } = await setup((emails) => {
      calls++;
      return Promise.resolve(emails.map((email) => (email === 'c@x.test' ? unasked(email) : accepted(email))));
    }, clock);
    await processor.handle({ kind: 'chunk', listId: id, chunk: 0 }, new AbortController().signal);
    expect(calls).toBe(3); // the first pass and unaskedPasses (2) more
    expect(queue.jobs).toEqual([{ job: { kind: 'retry', listId: id, chunk: 0, round: 1 }, delayMs: 60_000 }]);
    expect(await store.get(id)).toMatchObject({ status: 'retrying', processed: 2 });
  });

  it('a list cancelled between passes is not passed again', async () => {
    const clock = { now: 1_000_000 };
    let calls = 0;
    const { store, processor, id } = await setup(async (emails) => {
      calls++;
      await store.end(id, 'cancelled', clock.now, 'evt_cancelled');
      return emails.map(unasked);
    }, clock);
    await processor.handle({ kind: 'chunk', listId: id, chunk: 0 }, new AbortController().signal);
    expect(calls).toBe(1);
    expect(await store.get(id)).toMatchObject({ status: 'cancelled', processed: 0 });
  });
});
