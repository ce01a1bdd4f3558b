/**
 * What a soak's samples say (pure): a table per minute, and per process the slope of its RSS and
 * of its heap after collection, per hour and per 1,000 requests, by least squares over the samples
 * after the warm-up (the first fifth: caches, pools and JIT code fill up there and then stay).
 * The verdict is the heap's, the memory a process keeps: RSS lags (the allocator returns pages
 * late) and only confirms it.
 */
import type { Sample, SoakResult } from './soak-run.ts';

/** A process "grows" when its heap after collection keeps more than this per 1,000 requests. */
export const DEFAULT_BOUND_BYTES_PER_1000_REQUESTS = 256 * 1_024;

export interface Slope {
  /** Bytes per hour of the run. */
  perHour: number;
  /** Bytes per 1,000 requests answered (all kinds). */
  per1000Requests: number;
}

export interface ProcessVerdict {
  name: string;
  rss: Slope;
  heap: Slope;
  verdict: 'flat' | 'grows';
}

/** Least-squares slope of y over x. */
export function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

const steady = (samples: readonly Sample[]): Sample[] => samples.slice(Math.floor(samples.length / 5));

function slopeOf(samples: readonly Sample[], read: (s: Sample) => number | undefined): Slope {
  const byTime: Array<[number, number]> = [];
  const byRequests: Array<[number, number]> = [];
  for (const s of steady(samples)) {
    const y = read(s);
    if (y === undefined) continue;
    byTime.push([s.atS, y]);
    byRequests.push([s.requests, y]);
  }
  return { perHour: slope(byTime) * 3_600, per1000Requests: slope(byRequests) * 1_000 };
}

export function verdicts(result: SoakResult, boundPer1000 = DEFAULT_BOUND_BYTES_PER_1000_REQUESTS): ProcessVerdict[] {
  const names = Object.keys(result.samples[0]?.processes ?? {});
  return names.map((name) => {
    const heap = slopeOf(result.samples, (s) => s.processes[name]?.heapUsed);
    return {
      name,
      rss: slopeOf(result.samples, (s) => s.processes[name]?.rss),
      heap,
      verdict: heap.per1000Requests > boundPer1000 ? 'grows' : 'flat',
    };
  });
}

export const redisSlope = (result: SoakResult): Slope | undefined =>
  result.samples.some((s) => s.redis !== undefined) ? slopeOf(result.samples, (s) => s.redis?.usedMemory) : undefined;

const MiB = (bytes: number | undefined) => (bytes === undefined ? '-' : (bytes / 2 ** 20).toFixed(1));

/** One row per minute (the sample nearest each whole minute, and the last). */
export function minuteTable(result: SoakResult): Array<Record<string, string | number>> {
  const rows: Array<Record<string, string | number>> = [];
  let nextMinute = 0;
  result.samples.forEach((s, i) => {
    if (s.atS + 1 < nextMinute * 60 && i !== result.samples.length - 1) return;
    nextMinute = Math.floor((s.atS + 1) / 60) + 1;
    const row: Record<string, string | number> = { min: (s.atS / 60).toFixed(1), requests: s.requests };
    for (const [name, p] of Object.entries(s.processes)) {
      row[`${name} RSS MiB`] = MiB(p?.rss);
      row[`${name} heap MiB`] = MiB(p?.heapUsed);
    }
    if (s.redis !== undefined) {
      row['Redis MiB'] = MiB(s.redis.usedMemory);
      row['Redis keys'] = s.redis.keys;
    }
    rows.push(row);
  });
  return rows;
}

export function slopeTable(result: SoakResult, boundPer1000 = DEFAULT_BOUND_BYTES_PER_1000_REQUESTS): Array<Record<string, string>> {
  const rows: Array<Record<string, string>> = verdicts(result, boundPer1000).map((v) => ({
    process: v.name,
    'RSS MiB/h': MiB(v.rss.perHour),
    'heap MiB/h': MiB(v.heap.perHour),
    'heap KiB/1000 req': (v.heap.per1000Requests / 1_024).toFixed(1),
    verdict: v.verdict,
  }));
  const redis = redisSlope(result);
  if (redis !== undefined)
    rows.push({
      process: 'Redis used_memory',
      'RSS MiB/h': MiB(redis.perHour),
      'heap MiB/h': '-',
      'heap KiB/1000 req': (redis.per1000Requests / 1_024).toFixed(1),
      verdict: 'expiring keys (see README)',
    });
  return rows;
}
