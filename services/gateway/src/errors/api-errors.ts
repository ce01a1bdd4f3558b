/**
 * The one mapping from whatever went wrong to the contract's error `{ error, message, details? }`,
 * shared by the REST routes, the error plugin and the tool servers, so that both doors of an
 * operation answer the same error for the same fault.
 */
import { ApiError, isApiError } from '@svc/contracts';
import { windowedLog } from '@svc/telemetry';
import type { FastifyBaseLogger, FastifyError, FastifyReply } from 'fastify';

/** The largest JSON body a route takes (list CSV uploads have their own limit). */
export const BODY_LIMIT_BYTES = 64 * 1024;

const FASTIFY_CODES: Record<string, () => ApiError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('payload_too_large', `The request body is larger than ${BODY_LIMIT_BYTES / 1024} KiB.`),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ApiError('unsupported_media_type', 'Send the body as application/json.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('invalid_request', 'The Content-Length header does not match the body.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => missingBody(),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ApiError('invalid_request', 'The request body is not valid JSON.'),
  FST_ERR_BAD_URL: () => new ApiError('invalid_request', 'The request URL is malformed.'),
};

export const missingBody = (): ApiError => new ApiError('invalid_request', 'The request body is missing; send a JSON object.');

const internalError = (requestId: string): ApiError =>
  new ApiError('internal_error', `Something went wrong on our side; quote request id ${requestId} when reporting it.`, {
    details: { requestId },
  });

const hasCode = (error: Error): error is FastifyError => typeof (error as Partial<FastifyError>).code === 'string';
const statusOf = (error: Error): number | undefined => {
  const status = (error as Partial<FastifyError>).statusCode;
  return typeof status === 'number' ? status : undefined;
};

export function toApiError(error: unknown, requestId: string): ApiError {
  if (isApiError(error)) return error;
  if (!(error instanceof Error)) return internalError(requestId);
  const mapped = hasCode(error) ? FASTIFY_CODES[error.code] : undefined;
  if (mapped !== undefined) return mapped();
  const status = statusOf(error);
  // The JSON parser throws a SyntaxError marked 400 for malformed bodies.
  if (error instanceof SyntaxError && status === 400) return FASTIFY_CODES.FST_ERR_CTP_INVALID_JSON_BODY!();
  if (status === 413) return FASTIFY_CODES.FST_ERR_CTP_BODY_TOO_LARGE!();
  if (status === 415) return FASTIFY_CODES.FST_ERR_CTP_INVALID_MEDIA_TYPE!();
  if (status !== undefined && status >= 400 && status < 500) return new ApiError('invalid_request', 'The request is malformed.');
  return internalError(requestId);
}

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.toBody());
}

/** Expected refusals of the backend (503, 504) are warnings; any other 5xx is a bug. */
export const isBug = (error: ApiError): boolean => error.status >= 500 && error.code !== 'service_unavailable' && error.code !== 'timeout';

/**
 * Logs a request or tool call that ended in `apiError` (from `error`) to `log` (the request's): a
 * defect at `error` with its stack, an expected 5xx (Redis out of reach, a deadline) at `warn`, a
 * caller's mistake at `info`.
 */
export type ApiErrorLog = (log: FastifyBaseLogger, error: unknown, apiError: ApiError, fields?: Record<string, unknown>) => void;

/**
 * The gateway's ApiErrorLog. Refusals for want of the backend (Redis out of reach): every call of
 * an outage gets one, so they are written like the backend's own errors (decisions, "Redis
 * topologies"), at most once per kind and `windowMs` (LOG_ERROR_WINDOW_MS) in this process with a
 * count of those left out, however many calls keep coming. Each call's status and id still reach
 * the access log.
 */
export function apiErrorLog(windowMs: number): ApiErrorLog {
  const backendRefusals = windowedLog(windowMs);
  return (log, error, apiError, fields = {}) => {
    if (isBug(apiError)) log.error({ ...fields, err: error, code: apiError.code }, 'request failed');
    else if (apiError.code === 'service_unavailable')
      backendRefusals(log, 'warn', `${apiError.code}:${apiError.message}`, { ...fields, code: apiError.code }, apiError.message);
    else if (apiError.status >= 500) log.warn({ ...fields, code: apiError.code }, apiError.message);
    else log.info({ ...fields, code: apiError.code }, apiError.message);
  };
}
