import type { z } from 'zod';

/**
 * A kind of job that crosses from the gateway to a worker: its queue and the schemas of what goes
 * in and what comes back. Each operation's contract declares its own (`QR_JOB`, `VERIFY_JOB`).
 */
export interface JobKind<P, R> {
  /** Queue name: one queue per worker kind. */
  readonly name: string;
  readonly payload: z.ZodType<P>;
  readonly result: z.ZodType<R>;
  /**
   * Jobs of this kind are quick and all alike (tens of microseconds of CPU, no waiting), so under
   * load a gateway may send several in one queue job (a bundle, `@svc/jobs`' job-bundles.ts).
   */
  readonly bundled?: boolean;
}
