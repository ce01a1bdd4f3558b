/**
 * The contract's bound on a Redis outage's log (decisions, "Redis topologies"): every kind of
 * error at most once per window (10 s in the contract), with the count of those left out. Shared by
 * the verify-worker's and the gateway's outage tests, which run their processes with this window.
 */
import { expect } from 'vitest';
import type { LogLine } from './worker-processes.ts';

/** The window the tests' processes are given (LOG_ERROR_WINDOW_MS): an outage spans several, none is waited out for long. */
export const WINDOW_MS = 2_000;
export const WARN = 40;

/** What makes two lines the same kind of report: its message and what went wrong (a code, else the error's text). */
function kindOf(line: LogLine): string {
  const err = line.err as { code?: string; message?: string } | undefined;
  return `${line.msg.replace(/ \(repeated\)$/, '')}|${err?.code ?? err?.message ?? ''}`;
}

/**
 * Whether a count of reports left out has been written: the first window's, when it ends (a
 * window after the cut). The outage tests wait for it rather than for a fixed time.
 */
export const hasCount = (lines: readonly LogLine[]): boolean =>
  lines.some((line) => line.level >= WARN && typeof line.suppressed === 'number' && line.suppressed > 0);

/** Lines of `lines` at warn or above, grouped by kind; checked against the contract's bound since `cutAt`. */
export function expectBoundedLog(lines: LogLine[], cutAt: number, label: string): void {
  const byKind = new Map<string, LogLine[]>();
  for (const line of lines) byKind.set(kindOf(line), [...(byKind.get(kindOf(line)) ?? []), line]);
  console.info(`[outage-logs] ${label}: ${lines.length} warn/error lines, ${byKind.size} kinds`);
  expect(lines.length).toBeGreaterThan(0);
  // Each kind: at most one line per window since the cut (the window's first report, then its count).
  const windows = Math.ceil((Date.now() - cutAt) / WINDOW_MS);
  for (const [kind, same] of byKind) {
    expect(same.length, kind).toBeLessThanOrEqual(windows);
    for (let i = 1; i < same.length; i += 1) expect(same[i]!.time - same[i - 1]!.time, kind).toBeGreaterThanOrEqual(WINDOW_MS - 50);
  }
  // What was left out is counted, not lost; and counted per the window the process was given
  // (LOG_ERROR_WINDOW_MS, through the logger its root makes), not the default 10 s.
  expect(lines.some((line) => typeof line.suppressed === 'number' && line.suppressed > 0)).toBe(true);
  for (const line of lines) if (typeof line.suppressed === 'number') expect(line.windowMs, kindOf(line)).toBe(WINDOW_MS);
  expect(lines.length).toBeLessThanOrEqual(byKind.size * windows);
}
