/**
 * Progress of a tool call (`notifications/progress`), sent when the client put a
 * `progressToken` in the call's `_meta`: the call reports how far it is (a verify batch: distinct
 * addresses settled of its total, from the verifier through the job transport; a list's creation:
 * rows read and stored of the payload's), and each report that moves forward becomes one
 * notification. The SDK then answers the call as an event stream (exchange.ts pipes it), the
 * notifications first and the result last.
 */
import type { ServerContext } from '@modelcontextprotocol/server';
import { throttleProgress } from '@svc/jobs';

export type ProgressReport = (done: number, total: number) => void;

/** What a notification says besides its figures. */
export type ProgressWords = (done: number, total: number) => string;

const ADDRESSES_SETTLED: ProgressWords = (done, total) => `${done} of ${total} distinct addresses settled`;

/** The call's progress reporter, or undefined when its client asked for none. */
export function progressReporter(ctx: ServerContext | undefined, words: ProgressWords = ADDRESSES_SETTLED): ProgressReport | undefined {
  const token = ctx?.mcpReq._meta?.progressToken;
  if (ctx === undefined || token === undefined) return undefined;
  let last = -1;
  return (done, total) => {
    // The specification wants the value to grow with every notification of a token.
    if (done <= last) return;
    last = done;
    ctx.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken: token, progress: done, total, message: words(done, total) } })
      .catch(() => undefined); // a client gone is the call's own business (cancellation)
  };
}

/** A report made at most every so often, and its end. */
export interface ThrottledProgress {
  report: ProgressReport;
  /** The end: the last total reported, as done (sent whatever the interval). */
  finish(): void;
  /** Nothing more is sent (a call that failed or whose caller left). */
  stop(): void;
}

/**
 * `report` throttled as a worker throttles a job's progress (@svc/jobs `throttleProgress`: the
 * first at once, then at most one per 250 ms, the latest held back sent when the interval ends),
 * and `finish` sends the end.
 */
export function throttled(report: ProgressReport, intervalMs?: number, now?: () => number): ThrottledProgress {
  const throttle = throttleProgress(report, intervalMs, now);
  let lastTotal: number | undefined;
  return {
    report(done, total) {
      lastTotal = total;
      throttle.report(done, total);
    },
    finish() {
      if (lastTotal !== undefined) throttle.report(lastTotal, lastTotal);
      throttle.stop();
    },
    stop: throttle.stop,
  };
}
