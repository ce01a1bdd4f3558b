/** The retry schedule: doubling delays up to a ceiling, jitter that only shortens, and an end. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE, maxAttempts, nextStep, retryDelayMs, retrySchedule } from '@svc/webhooks';

const HOUR = 3_600_000;

describe('retryDelayMs', () => {
  it('doubles from the first delay up to the ceiling (no jitter at random = 0)', () => {
    const delays = Array.from({ length: 10 }, (_, i) => retryDelayMs(DEFAULT_RETRY_SCHEDULE, i + 1, 0));
    expect(delays).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, HOUR, HOUR, HOUR]);
    expect(retryDelayMs(DEFAULT_RETRY_SCHEDULE, 10_000, 0)).toBe(HOUR);
  });

  it('jitter shortens a delay by at most its fraction', () => {
    for (const random of [0, 0.25, 0.5, 0.999]) {
      const delay = retryDelayMs(DEFAULT_RETRY_SCHEDULE, 3, random);
      expect(delay).toBeLessThanOrEqual(120_000);
      expect(delay).toBeGreaterThanOrEqual(120_000 * 0.8);
    }
    expect(retryDelayMs(DEFAULT_RETRY_SCHEDULE, 3, 0.5)).toBe(108_000);
  });
});

describe('nextStep', () => {
  it('retries while the next attempt falls within 24 hours of the enqueue, then stops', () => {
    expect(nextStep(DEFAULT_RETRY_SCHEDULE, 1, 0, 0, 0)).toEqual({ retry: true, delayMs: 30_000 });
    expect(nextStep(DEFAULT_RETRY_SCHEDULE, 20, 0, 23 * HOUR, 0)).toEqual({ retry: true, delayMs: HOUR });
    expect(nextStep(DEFAULT_RETRY_SCHEDULE, 20, 0, 23 * HOUR + 1, 0)).toEqual({ retry: false });
  });

  it('the default schedule makes about 30 attempts in its 24 hours, none after', () => {
    for (const random of [0, 0.999]) {
      let now = 0;
      let attempts = 1;
      for (;;) {
        const step = nextStep(DEFAULT_RETRY_SCHEDULE, attempts, 0, now, random);
        if (!step.retry) break;
        now += step.delayMs;
        attempts += 1;
      }
      expect(now).toBeLessThanOrEqual(24 * HOUR);
      expect(now).toBeGreaterThan(23 * HOUR);
      expect(attempts).toBeGreaterThanOrEqual(30);
      expect(attempts).toBeLessThanOrEqual(maxAttempts(DEFAULT_RETRY_SCHEDULE));
    }
  });
});

describe('retrySchedule', () => {
  it('takes overrides and refuses nonsense', () => {
    expect(retrySchedule({ firstDelayMs: 100 })).toEqual({ ...DEFAULT_RETRY_SCHEDULE, firstDelayMs: 100 });
    expect(() => retrySchedule({ firstDelayMs: 0 })).toThrow(RangeError);
    expect(() => retrySchedule({ firstDelayMs: 10, maxDelayMs: 5 })).toThrow(RangeError);
    expect(() => retrySchedule({ jitter: 0.9 })).toThrow(RangeError);
  });
});
