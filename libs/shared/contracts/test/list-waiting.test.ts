/**
 * The waiting sentences the console's panel and verify-list's progress line share: how many wait
 * and why (the service's reasons, or what waiting means when it gives none), the next retry and
 * the end, with the time of day or, for a short line, without.
 */
import { describe, expect, it } from 'vitest';
import { inTime, timeLeft, waitingLines } from '../src/list-waiting.ts';

const now = new Date('2026-11-28T10:00:00Z');
const retrying = {
  status: 'retrying',
  count: 294,
  processed: 290,
  waiting: 4,
  waitingReasons: { greylisted: 3, no_connect: 1, timeout: 0 },
  nextRetryAt: '2026-11-28T10:03:10Z',
  estimatedCompletionAt: '2026-11-28T11:29:40Z',
};

describe('waiting sentences', () => {
  it('say how many wait and why, then when, with the time of day', () => {
    const [what, next, left, ...rest] = waitingLines(retrying, now);
    expect(what).toBe('4 addresses wait for a retry: 3 greylisted, 1 no connect.');
    expect(next).toMatch(/^Next retry at \d\d:\d\d \(in 3 min\)\.$/);
    expect(left).toMatch(/^Expected to finish by \d\d:\d\d \(in about 1 h 30 min\)\.$/);
    expect(rest).toEqual([]);
  });

  it('without the clock, only how long', () => {
    expect(waitingLines(retrying, now, { clock: false })).toEqual([
      '4 addresses wait for a retry: 3 greylisted, 1 no connect.',
      'Next retry in 3 min.',
      'Expected to finish in about 1 h 30 min.',
    ]);
  });

  it('before the service said what waits: what is not processed, and what waiting means', () => {
    expect(waitingLines({ status: 'retrying', count: 2, processed: 1 }, now)).toEqual([
      '1 address waits for a retry: their mail servers answered “try again later” (greylisting, a busy or rate-limited server, or one that could not be reached for now).',
    ]);
  });

  it('time left: none without an estimate; relative times round to minutes', () => {
    expect(timeLeft({ status: 'running', count: 1, processed: 0 }, now)).toBe('');
    expect(timeLeft({ status: 'running', count: 1, processed: 0, estimatedCompletionAt: 'not a date' }, now)).toBe('');
    expect(inTime(new Date(now.getTime() - 1_000), now)).toBe('any moment now');
    expect(inTime(new Date(now.getTime() + 59_000), now)).toBe('in less than a minute');
    expect(inTime(new Date(now.getTime() + 150_000), now)).toBe('in 3 min');
  });
});
