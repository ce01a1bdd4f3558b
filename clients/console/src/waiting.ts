/**
 * What a person waiting for a list needs to read: how many addresses wait for a retry and why,
 * when the next retry is, and when the list should be done; from the list object's `waiting`,
 * `waitingReasons`, `nextRetryAt` and `estimatedCompletionAt`. Pure (the clock is passed in).
 */
export interface WaitingState {
  status: string;
  count: number;
  processed: number;
  waiting?: number;
  waitingReasons?: Record<string, number>;
  nextRetryAt?: string;
  estimatedCompletionAt?: string;
}

const clock = (at: Date) => at.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });

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

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** The time left while a list runs or retries, as a sentence; '' when the service gives no estimate. */
export function timeLeft(list: WaitingState, now: Date): string {
  const done = dateOf(list.estimatedCompletionAt);
  return done === undefined ? '' : `Expected to finish by ${clock(done)} (${inTime(done, now)}).`;
}

/** The sentences of the waiting panel: what waits and why, and the next retry. */
export function waitingLines(list: WaitingState, now: Date): string[] {
  // Before the service said `waiting`, what was not processed yet was what waited.
  const count = list.waiting ?? Math.max(0, list.count - list.processed);
  const reasons = Object.entries(list.waitingReasons ?? {}).filter(([, n]) => n > 0);
  const why =
    reasons.length === 0
      ? 'their mail servers answered “try again later” (greylisting, a busy or rate-limited server, or one that could not be reached for now)'
      : reasons.map(([reason, n]) => `${n} ${reason.replaceAll('_', ' ')}`).join(', ');
  const lines = [`${plural(count, 'address waits', 'addresses wait')} for a retry: ${why}.`];
  const next = dateOf(list.nextRetryAt);
  if (next !== undefined) lines.push(`Next retry at ${clock(next)} (${inTime(next, now)}).`);
  const left = timeLeft(list, now);
  if (left !== '') lines.push(left);
  return lines;
}
