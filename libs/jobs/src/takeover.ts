/**
 * How soon a job whose worker died (crash, SIGKILL, lost node) is taken up by another worker:
 * within 3 s for QR and 10 s for verify, so that its caller still gets the answer inside the
 * original deadline.
 *
 * The mechanism is BullMQ's own: a live worker renews each job's lock every half lock duration;
 * the stalled-job check (run by every worker, at most once per interval across them) marks the
 * active jobs, and a job still marked and without a lock at the next check goes back to wait,
 * where any worker takes it at once. So a dead worker's job is back in the queue at most
 * `lockDuration + stalledInterval` after the crash. Half the budget for the lock and a sixth for
 * the interval leave a third for the hand-over itself and for a busy event loop: a lock is lost
 * by a live worker only when its event loop stalls for more than half a lock duration, and then
 * the job runs twice (its caller is answered, and billed, once).
 */
import { QR_JOB, VERIFY_JOB } from '@svc/contracts';

export const TAKEOVER_MS: Readonly<Record<string, number>> = { [QR_JOB.name]: 3_000, [VERIFY_JOB.name]: 10_000 };
const DEFAULT_TAKEOVER_MS = 10_000;

export interface LockTiming {
  lockDurationMs: number;
  stalledIntervalMs: number;
}

export function lockTimingFor(queue: string, takeoverMs: number = TAKEOVER_MS[queue] ?? DEFAULT_TAKEOVER_MS): LockTiming {
  return { lockDurationMs: Math.round(takeoverMs / 2), stalledIntervalMs: Math.max(100, Math.round(takeoverMs / 6)) };
}
