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

/** The stores a request reads or writes in Redis besides the job backend, named in its 503. */
export type BackendPart = 'key store' | 'rate limiter' | 'meter' | 'list store' | 'feedback store';

/** A store on the request's path did not answer in time (REDIS_COMMAND_TIMEOUT_MS) or is gone. */
export const storeUnavailableError = (part: BackendPart, cause?: unknown): ApiError =>
  new ApiError('service_unavailable', `The ${part} cannot be reached right now; try again shortly.`, {
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
