/**
 * How soon a job whose worker died (crash, SIGKILL, lost node) is taken up by another worker:
 * within 3 s for QR and 10 s for verify, so that its caller still gets the answer inside the
 * original deadline.
 *
 * The mechanism is BullMQ's own: a live worker renews each job's lock every half lock duration;
 * the stalled-job check (run by every worker, at most once per interval across them) marks the
 * active jobs, and a job still marked and without a lock at the next check goes back to the head
 * of the wait list, where the next free worker takes it. So a dead worker's job is back in the
 * queue at most `lockDuration + stalledInterval` after the crash: with 0.3 and 1/8 of the budget
 * that is 0.425 of it, leaving more than half for a survivor busy with other jobs to free a slot.
 * Measured (test/lifecycle/crash-takeover.test.ts, two workers under load, one SIGKILLed): QR
 * jobs back in the queue about 1.2 s after the crash, verify jobs about 4 s.
 *
 * A live worker loses a lock only when its event loop stalls for more than half a lock duration
 * (0.45 s for QR, 1.5 s for verify); its job then runs twice, and its caller is still answered,
 * and billed, once (billing is the gateway's, per answered call).
 */
import { QR_JOB, VERIFY_JOB } from '@svc/contracts';

export const TAKEOVER_MS: Readonly<Record<string, number>> = { [QR_JOB.name]: 3_000, [VERIFY_JOB.name]: 10_000 };
const DEFAULT_TAKEOVER_MS = 10_000;

interface LockTiming {
  lockDurationMs: number;
  stalledIntervalMs: number;
}

export function lockTimingFor(queue: string, takeoverMs: number = TAKEOVER_MS[queue] ?? DEFAULT_TAKEOVER_MS): LockTiming {
  return { lockDurationMs: Math.round(takeoverMs * 0.3), stalledIntervalMs: Math.max(100, Math.round(takeoverMs / 8)) };
}
