/**
 * A job's progress reaches its caller in both transports (protocol v2, docs/architecture.md "Job
 * messages"): in process every report, over BullMQ throttled progress messages through the
 * gateway's inbox, before the answer, growing, the last one the total; none when nobody follows
 * the job; and the messages stay invisible to readers of earlier versions.
 */
import { EventEmitter } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { InProcessTransport, registerHandler, type JobTransport } from '@svc/jobs';
import { BullTransport, startBullWorker, type Worker } from '@svc/jobs/bullmq';
import { dropPrefix, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { parseProgressMessage } from '../src/progress-message.ts';
import { PROGRESS_INTERVAL_MS, throttleProgress } from '../src/progress-throttle.ts';
import { parseReply } from '../src/reply-channel.ts';
import { ECHO_JOB } from './fixtures/echo-job.ts';

const STEPS = 400;
const BURST = 100;

/** The latest progress each caller (by job value) has been told, and a word to the jobs waiting on it. */
const told = new Map<string, number>();
const tellings = new EventEmitter();
const heard = (value: string, done: number): Promise<void> =>
  new Promise((resolve) => {
    const check = () => {
      if ((told.get(value) ?? 0) < done) return;
      tellings.off('told', check);
      resolve();
    };
    tellings.on('told', check);
    check();
  });

/**
 * Settles STEPS items, reporting each, as a verify job reports each address: in bursts of BURST
 * reports, a burst starting once the caller has been told of the one before. The throttle meets
 * many reports at once and time between them, paced by what it sends rather than by a clock.
 */
const stepping = registerHandler(ECHO_JOB, async (payload, context) => {
  for (let done = 1; done <= STEPS; done += 1) {
    context.progress?.(done, STEPS);
    if (context.progress !== undefined && done % BURST === 0 && done < STEPS) await heard(payload.value, done);
  }
  return { value: `${payload.value}:${context.progress === undefined ? 'unfollowed' : 'followed'}` };
});

/** The job's answer, and the progress its caller was told before the answer. */
async function follow(transport: JobTransport, value: string): Promise<{ updates: Array<[number, number]>; value: string }> {
  const updates: Array<[number, number]> = [];
  const result = await transport.submit(
    ECHO_JOB,
    { value, delayMs: 0, fail: false, badResult: false },
    {
      deadlineMs: 20_000,
      requestId: `req-${value}`,
      onProgress: (done, total) => {
        updates.push([done, total]);
        told.set(value, done);
        tellings.emit('told');
      },
    },
  );
  return { updates: [...updates], value: result.value };
}

function expectGrowingToTotal(updates: Array<[number, number]>): void {
  const values = updates.map(([done]) => done);
  expect(values).toEqual([...values].sort((a, b) => a - b));
  expect(new Set(values).size).toBe(values.length);
  expect(updates.every(([, total]) => total === STEPS)).toBe(true);
  expect(values.at(-1)).toBe(STEPS);
}

describe('in process', () => {
  it('every report reaches the caller', async () => {
    const transport = new InProcessTransport([stepping]);
    const seen = await follow(transport, 'a');
    await transport.close();
    expect(seen.value).toBe('a:followed');
    expect(seen.updates).toHaveLength(STEPS);
    expectGrowingToTotal(seen.updates);
  });
});

describe('over BullMQ', () => {
  const url = testRedisUrl();
  const prefix = uniquePrefix('progress');
  let transport: BullTransport;
  let worker: Worker;
  beforeAll(async () => {
    transport = await BullTransport.create({ redis: url, redisPrefix: prefix, kinds: [ECHO_JOB] });
    worker = startBullWorker(stepping, { redis: url, redisPrefix: prefix, concurrency: 2 });
  });
  afterAll(async () => {
    await worker?.close();
    await transport?.close();
    await dropPrefix(url, prefix);
  });

  it('a followed job sends throttled, growing progress messages, the total last, all before its answer', async () => {
    const started = Date.now();
    const seen = await follow(transport, 'b');
    const seconds = (Date.now() - started) / 1_000;
    expect(seen.value).toBe('b:followed');
    expectGrowingToTotal(seen.updates);
    // One message per interval at most, plus the first and the last: not one per item (one per burst here).
    expect(seen.updates.length).toBeGreaterThanOrEqual(3);
    expect(seen.updates.length).toBeLessThanOrEqual(Math.ceil((seconds * 1_000) / PROGRESS_INTERVAL_MS) + 2);
  });

  it('a job nobody follows has no progress callback and sends nothing', async () => {
    const result = await transport.submit(
      ECHO_JOB,
      { value: 'c', delayMs: 0, fail: false, badResult: false },
      {
        deadlineMs: 20_000,
        requestId: 'req-c',
      },
    );
    expect(result.value).toBe('c:unfollowed');
  });

  it('two followed jobs at once each get only their own progress', async () => {
    const [one, two] = await Promise.all([follow(transport, 'd'), follow(transport, 'e')]);
    expectGrowingToTotal(one.updates);
    expectGrowingToTotal(two.updates);
  });
});

describe('the progress message across versions', () => {
  const message = JSON.stringify({ v: 2, jobId: 'j1', progress: { done: 3, total: 7 } });

  it('is read by this release', () => {
    expect(parseProgressMessage(message)).toEqual({ v: 2, jobId: 'j1', progress: { done: 3, total: 7 } });
  });

  it('is never taken for an answer, by this release nor by the answer schema of v0 and v1', () => {
    expect(parseReply(message)).toBeUndefined();
    const olderReplySchema = z.union([
      z.object({ jobId: z.string(), ok: z.literal(true), result: z.unknown() }),
      z.object({ jobId: z.string(), ok: z.literal(false), reason: z.string() }),
    ]);
    expect(olderReplySchema.safeParse(JSON.parse(message)).success).toBe(false);
  });

  it('an answer is not a progress message; a malformed one is none', () => {
    expect(parseProgressMessage('{"v":2,"jobId":"a","ok":true,"result":{"progress":1}}')).toBeUndefined();
    expect(parseProgressMessage('{"jobId":"a","progress":{"done":-1,"total":2}}')).toBeUndefined();
    expect(parseProgressMessage('{"jobId":"a","progress":')).toBeUndefined();
  });
});

describe('the throttle', () => {
  afterEach(() => vi.useRealTimers());

  it('sends the first report at once, then at most one per interval (the latest held back), the total at once', () => {
    vi.useFakeTimers();
    const sent: number[] = [];
    const throttle = throttleProgress((done) => sent.push(done), 250);
    throttle.report(1, 100);
    throttle.report(2, 100);
    throttle.report(3, 100);
    expect(sent).toEqual([1]);
    vi.advanceTimersByTime(250);
    expect(sent).toEqual([1, 3]);
    for (let done = 4; done <= 60; done += 1) {
      throttle.report(done, 100);
      vi.advanceTimersByTime(10);
    }
    // 570 ms of reports: one message per 250 ms.
    expect(sent).toEqual([1, 3, 28, 53]);
    throttle.report(100, 100);
    expect(sent.at(-1)).toBe(100);
    vi.advanceTimersByTime(1_000);
    expect(sent).toEqual([1, 3, 28, 53, 100]);
  });

  it('drops what it holds once stopped', () => {
    vi.useFakeTimers();
    const sent: number[] = [];
    const throttle = throttleProgress((done) => sent.push(done), 250);
    throttle.report(1, 10);
    throttle.report(2, 10);
    throttle.stop();
    vi.advanceTimersByTime(1_000);
    throttle.report(10, 10);
    expect(sent).toEqual([1]);
  });
});
