import { describe, expect, it } from 'vitest';
import { RateMeter, formatDuration, progressLine } from '../src/progress.ts';

describe('the rate', () => {
  it('is unknown until two samples half a second apart', () => {
    const meter = new RateMeter();
    meter.add(0, 0);
    expect(meter.rate()).toBeUndefined();
    meter.add(400, 100);
    expect(meter.rate()).toBeUndefined();
    meter.add(2_000, 200);
    expect(meter.rate()).toBe(100);
  });

  it('follows the last minute, not the average since the start', () => {
    const meter = new RateMeter();
    // 10 a second for two minutes, then 100 a second for a minute.
    for (let s = 0; s <= 120; s += 2) meter.add(s * 1000, s * 10);
    for (let s = 122; s <= 180; s += 2) meter.add(s * 1000, 1200 + (s - 120) * 100);
    expect(meter.rate()).toBe(100); // the average since the start would be 7200 / 180 = 40
  });
});

describe('the progress line', () => {
  it('writes durations people read', () => {
    expect(formatDuration(0.4)).toBe('0s');
    expect(formatDuration(45)).toBe('45s');
    expect(formatDuration(185)).toBe('3m 05s');
    expect(formatDuration(3720)).toBe('1h 02m');
  });

  it('says processed/count, the percentage, the rate and the time left', () => {
    const running = { status: 'running', count: 12000, processed: 4300 };
    expect(progressLine(running, 85, { bar: false })).toBe('4,300/12,000 35%, 85 addresses/s, 1m 31s left (running)');
    expect(progressLine(running, 2.5, { bar: false })).toBe('4,300/12,000 35%, 2.5 addresses/s, 51m 20s left (running)');
    expect(progressLine(running, undefined, { bar: false })).toBe('4,300/12,000 35%, measuring the rate (running)');
  });

  it('says what a queued or retrying list waits for instead of a time it cannot know', () => {
    expect(progressLine({ status: 'queued', count: 500, processed: 0 }, undefined, { bar: false })).toBe(
      '0/500 0%, waiting for a worker (queued)',
    );
    expect(progressLine({ status: 'retrying', count: 500, processed: 488 }, 0, { bar: false })).toBe(
      '488/500 97%, 12 addresses wait for a retry: their mail servers answered “try again later” (greylisting, a busy or rate-limited server, or one that could not be reached for now). (retrying)',
    );
    // With what the service says: how many wait, why, the next retry and the end; the console's words, without the time of day.
    const now = Date.parse('2026-11-28T10:00:00Z');
    const waiting = {
      status: 'retrying',
      count: 294,
      processed: 290,
      waiting: 4,
      waitingReasons: { greylisted: 3, no_connect: 1 },
      nextRetryAt: '2026-11-28T10:03:10Z',
      estimatedCompletionAt: '2026-11-28T10:09:40Z',
    };
    expect(progressLine(waiting, 0, { bar: false, now })).toBe(
      '290/294 98%, 4 addresses wait for a retry: 3 greylisted, 1 no connect. Next retry in 3 min. Expected to finish in 10 min. (retrying)',
    );
    expect(progressLine({ status: 'completed', count: 500, processed: 500 }, 40, { bar: false })).toBe('500/500 100%, done (completed)');
  });

  it('draws a bar of 24 cells for a terminal', () => {
    const line = progressLine({ status: 'running', count: 100, processed: 50 }, 10, { bar: true });
    expect(line).toBe(`[${'█'.repeat(12)}${'░'.repeat(12)}] 50/100 50%, 10 addresses/s, 5s left (running)`);
  });
});
