import { ApiError } from '@svc/contracts';

export const deadlineError = (): ApiError => new ApiError('timeout', 'The job did not finish within the request deadline.');

/** The deadline passed with the job still queued: no worker of its kind is running, or all were busy. */
export const notTakenError = (kind: string): ApiError =>
  new ApiError('timeout', `No ${kind} worker took this job before the request deadline: none is running, or all were busy.`);

export const unavailableError = (cause?: unknown): ApiError =>
  new ApiError('service_unavailable', 'The job backend cannot take this job right now; try again shortly.', {
    headers: { 'Retry-After': '5' },
    cause,
  });

export const jobFailedError = (requestId: string, cause?: unknown): ApiError =>
  new ApiError('internal_error', `The job failed; quote request id ${requestId} when reporting it.`, {
    details: { requestId },
    cause,
  });

/**
 * The caller closed its connection before the answer was ready: nobody waits any more, so the
 * wait ends at once and nothing is billed. Not an ApiError: no answer will be sent.
 */
export class CallerGoneError extends Error {
  constructor() {
    super('the caller closed the connection before the answer was ready');
    this.name = 'CallerGoneError';
  }
}
