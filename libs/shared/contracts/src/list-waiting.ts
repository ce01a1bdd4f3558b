/**
 * What a person waiting for a list reads while it retries (issue 33): how many addresses wait for
 * a retry and why, when the next retry is, and when the list should be done; from the list
 * object's `waiting`, `waitingReasons`, `nextRetryAt` and `estimatedCompletionAt`. One wording for
 * the web console's waiting panel and verify-list's progress line, so the two never tell the same
 * list differently. Pure (the clock is passed in) and without imports, so the console bundles it.
 */

/** The fields of a list object the sentences read. */
export interface WaitingState {
  status: string;
  count: number;
  processed: number;
  waiting?: number;
  waitingReasons?: Record<string, number>;
  nextRetryAt?: string;
  estimatedCompletionAt?: string;
}

export interface WaitingOptions {
  /**
   * Say the time of day (`Next retry at 14:05 (in 3 min).`), in the local time zone; default true.
   * False: only how long (`Next retry in 3 min.`), for a line that must stay short (a terminal).
   */
  clock?: boolean;
}

const clockOf = (at: Date) => at.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });

/** `in 3 min`, `in about 1 h 20 min`, `in less than a minute`, `any moment now`. */
export function inTime(at: Date, now: Date): string {
  const seconds = Math.round((at.getTime() - now.getTime()) / 1000);
  if (seconds <= 0) return 'any moment now';
  if (seconds < 60) return 'in less than a minute';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `in ${minutes} min`;
  return `in about ${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

const dateOf = (value: string | undefined): Date | undefined => {
  if (value === undefined) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
};

/** `at 14:05 (in 3 min)`, or `in 3 min` without the clock. */
const when = (at: Date, now: Date, options: WaitingOptions) =>
  options.clock === false ? inTime(at, now) : `at ${clockOf(at)} (${inTime(at, now)})`;

const plural = (count: number, one: string, many: string) => `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;

/** The time left while a list runs or retries, as a sentence; '' when the service gives no estimate. */
export function timeLeft(list: WaitingState, now: Date, options: WaitingOptions = {}): string {
  const done = dateOf(list.estimatedCompletionAt);
  if (done === undefined) return '';
  return options.clock === false
    ? `Expected to finish ${inTime(done, now)}.`
    : `Expected to finish by ${clockOf(done)} (${inTime(done, now)}).`;
}

/** The sentences of a list that retries: what waits and why, the next retry, the time left. */
export function waitingLines(list: WaitingState, now: Date, options: WaitingOptions = {}): string[] {
  // Before the service said `waiting`, what was not processed yet was what waited.
  const count = list.waiting ?? Math.max(0, list.count - list.processed);
  const reasons = Object.entries(list.waitingReasons ?? {}).filter(([, n]) => n > 0);
  const why =
    reasons.length === 0
      ? 'their mail servers answered “try again later” (greylisting, a busy or rate-limited server, or one that could not be reached for now)'
      : reasons.map(([reason, n]) => `${n.toLocaleString('en-US')} ${reason.replaceAll('_', ' ')}`).join(', ');
  const lines = [`${plural(count, 'address waits', 'addresses wait')} for a retry: ${why}.`];
  const next = dateOf(list.nextRetryAt);
  if (next !== undefined) lines.push(`Next retry ${when(next, now, options)}.`);
  const left = timeLeft(list, now, options);
  if (left !== '') lines.push(left);
  return lines;
}
