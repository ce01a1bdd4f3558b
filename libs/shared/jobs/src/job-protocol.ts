/**
 * The job protocol's version and how an error crosses it (docs/architecture.md, "Job messages").
 *
 * Every job a gateway sends and every answer a worker sends carries `v`, the version of the
 * protocol its writer speaks; a message without `v` is version 0 (a release before versions).
 * Versions only add optional fields, so each side reads the other's older and newer messages:
 *
 * - v0: a failure answers `{ jobId, ok: false, reason }`, a bare string; the gateway answers it
 *   `internal_error`, whatever the worker threw.
 * - v1: a failure also carries `error: { code, message, details?, headers? }` when the handler
 *   threw an ApiError, which the gateway throws as that same ApiError; in process it passes
 *   through as it is, so both modes answer it alike. `reason` stays, for v0 gateways.
 * - v2: a job may say `progress: true` (its caller follows it); its worker then also pushes
 *   `{ v, jobId, progress: { done, total } }` to the inbox while it runs, throttled
 *   (progress-message.ts, progress-throttle.ts). Only a v2 gateway asks, so no older gateway
 *   reads one; a v1 worker ignores the flag and reports nothing, as before.
 *
 * A change that an older reader would misread needs a new queue or inbox name, not a new `v`.
 */
import { z } from 'zod';
import { ApiError, ERROR_STATUS, type ErrorCode } from '@svc/contracts';

/** The version this release writes. */
export const JOB_PROTOCOL_VERSION = 2;

/** The version field as readers take it: absent is 0; a newer writer's number is read all the same. */
export const versionField = z.number().int().min(0).optional();

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** An ApiError as it crosses Redis: what its HTTP answer is made of (ErrorBody) and the headers it needs. */
export const wireErrorSchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
  headers: z.record(z.string(), z.string()).optional(),
});
export type WireError = z.infer<typeof wireErrorSchema>;

/**
 * The `error` field of a failure as readers take it: one they cannot read (a code a newer release
 * added) is as if absent, so that the failure still answers its request, as v0's `internal_error`,
 * instead of the whole answer being dropped as malformed.
 */
export const wireErrorField = wireErrorSchema.optional().catch(undefined);

/** What a thrown error sends over the wire: an ApiError's code and message; anything else nothing (it stays `internal_error`). */
export function toWireError(error: unknown): WireError | undefined {
  if (!(error instanceof ApiError)) return undefined;
  return {
    code: error.code,
    message: error.message,
    ...(error.details === undefined ? {} : { details: error.details }),
    ...(Object.keys(error.headers).length === 0 ? {} : { headers: error.headers }),
  };
}

/** A failure answer: `reason` for a gateway of v0, and `error` for one of v1 when the handler threw an ApiError. */
export function failureAnswer(jobId: string, error: unknown): { v: number; jobId: string; ok: false; reason: string; error?: WireError } {
  const wire = toWireError(error);
  const reason = error instanceof Error ? error.message : String(error);
  return { v: JOB_PROTOCOL_VERSION, jobId, ok: false, reason, ...(wire === undefined ? {} : { error: wire }) };
}

/** The ApiError a failure answer stands for: its wire error as itself, or a v0 reason as a plain Error (the wait makes it `internal_error`). */
export function failureError(failure: { reason: string; error?: WireError | undefined }): Error {
  const { error } = failure;
  if (error === undefined) return new Error(failure.reason);
  return new ApiError(error.code, error.message, {
    ...(error.details === undefined ? {} : { details: error.details }),
    ...(error.headers === undefined ? {} : { headers: error.headers }),
  });
}
