/**
 * How often a worker reports a job's progress over Redis: a verify job reports every address it
 * settles, and a message per address would be thousands of inbox writes for a large job. The
 * first report goes at once (the caller sees the job move), then at most one per `intervalMs`,
 * the latest of those held back sent when the interval ends; the last one (done = total) goes at
 * once, since the job's answer follows it. `stop` drops what is held back when the job has ended:
 * its answer says more than any progress.
 */

/** At most this often per job: 4 messages a second, about 120 for a batch running to its 30 s deadline. */
export const PROGRESS_INTERVAL_MS = 250;

export interface ProgressThrottle {
  /** A property, not a method: it is handed on as the job's progress callback. */
  readonly report: (done: number, total: number) => void;
  readonly stop: () => void;
}

export function throttleProgress(
  send: (done: number, total: number) => void,
  intervalMs = PROGRESS_INTERVAL_MS,
  now: () => number = Date.now,
): ProgressThrottle {
  let lastSentAt = -Infinity;
  let held: { done: number; total: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const emit = (done: number, total: number) => {
    held = undefined;
    lastSentAt = now();
    send(done, total);
  };
  const flushHeld = () => {
    timer = undefined;
    if (!stopped && held !== undefined) emit(held.done, held.total);
  };
  return {
    report: (done, total) => {
      if (stopped) return;
      const due = now() - lastSentAt >= intervalMs;
      if (due || done >= total) {
        clearTimeout(timer);
        timer = undefined;
        emit(done, total);
        return;
      }
      held = { done, total };
      timer ??= setTimeout(flushHeld, Math.max(0, lastSentAt + intervalMs - now()));
    },
    stop: () => {
      stopped = true;
      held = undefined;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
