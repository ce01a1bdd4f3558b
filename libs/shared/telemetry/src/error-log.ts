/**
 * Errors that repeat for as long as an outage lasts (a Redis that is gone, a queue that cannot
 * reach it): each kind is written at most once per window, and what was left out is counted and
 * written when the window ends, so that the log tells how bad it was without flooding.
 */
import type { Logger } from 'pino';

export type LogLevel = 'warn' | 'error';

/**
 * The window of the contract: at most one line per kind of backend error per 10 s per process.
 * A composition root gives its logger LOG_ERROR_WINDOW_MS instead (shorter only in test rigs,
 * whose outage tests need not wait out 10 s).
 */
export const ERROR_LOG_WINDOW_MS = 10_000;

/** Kinds are error codes per component: few, but bounded all the same. */
const MAX_KINDS = 1_000;

interface Window {
  startedAt: number;
  suppressed: number;
  /** The last report left out, written with the count when the window ends. */
  last?: { logger: LineWriter; level: LogLevel; fields: Record<string, unknown>; message: string };
  timer?: NodeJS.Timeout;
}

export type RateLimitedLog = (level: LogLevel, kind: string, fields: Record<string, unknown>, message: string) => void;

/** What a report is written to: any pino logger, a request's child included. */
export type LineWriter = Pick<Logger, LogLevel>;

/** A rate-limited log whose lines go to the logger of each report (a request's, with its id). */
export type WindowedLog = (logger: LineWriter, level: LogLevel, kind: string, fields: Record<string, unknown>, message: string) => void;

/**
 * Writes a report at once when its kind has been quiet for `windowMs`; otherwise counts it, and
 * at the end of the window writes the last one left out with `suppressed` (how many were). That
 * line opens a new window, so a kind never writes more than one line per window. Each report
 * names the logger it is written to: the windows are shared, the lines keep their own bindings
 * (the summary goes to the last report's logger, as it describes that report). `now` is the
 * clock the windows are measured by (a test moves it past a window instead of waiting it out).
 */
export function windowedLog(windowMs: number = ERROR_LOG_WINDOW_MS, now: () => number = Date.now): WindowedLog {
  const windows = new Map<string, Window>();
  const flush = (kind: string, window: Window): void => {
    window.timer = undefined;
    const { last, suppressed } = window;
    if (last === undefined || suppressed === 0) return void windows.delete(kind);
    windows.set(kind, { startedAt: now(), suppressed: 0 });
    last.logger[last.level]({ ...last.fields, suppressed, windowMs }, `${last.message} (repeated)`);
  };
  return (logger, level, kind, fields, message) => {
    const at = now();
    const window = windows.get(kind);
    if (window !== undefined && at - window.startedAt < windowMs) {
      window.suppressed += 1;
      window.last = { logger, level, fields, message };
      // Unref'd: a pending count must not keep a stopping process alive.
      window.timer ??= setTimeout(() => flush(kind, window), window.startedAt + windowMs - at).unref();
      return;
    }
    if (window === undefined && windows.size >= MAX_KINDS) {
      for (const [name, open] of windows) if (open.timer === undefined) windows.delete(name);
    }
    // A window whose count was not written yet (its timer late) hands the count to this line.
    if (window?.timer !== undefined) clearTimeout(window.timer);
    const suppressed = window?.suppressed ?? 0;
    windows.set(kind, { startedAt: at, suppressed: 0 });
    logger[level](suppressed === 0 ? fields : { ...fields, suppressed, windowMs }, message);
  };
}

/** `windowedLog` writing to one logger. */
export function rateLimitedLog(logger: LineWriter, windowMs: number = ERROR_LOG_WINDOW_MS, now: () => number = Date.now): RateLimitedLog {
  const log = windowedLog(windowMs, now);
  return (level, kind, fields, message) => log(logger, level, kind, fields, message);
}

/**
 * The kind of an error, for rate limiting: its code when it has one, else its message with the
 * numbers and ids taken out (BullMQ's "Missing lock for job 123" must be one kind, not one per job).
 */
export function errorKind(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const code: unknown = 'code' in error ? error.code : undefined;
  if (typeof code === 'string' && code !== '') return code;
  return error.message
    .replace(/[0-9a-f]{8}-[0-9a-f-]{27,}/gi, '<id>')
    .replace(/\d+/g, '<n>')
    .slice(0, 120);
}
