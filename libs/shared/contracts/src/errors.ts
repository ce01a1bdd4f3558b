/**
 * The error model (docs/api.md, "Errors"): every error body is `{ error, message, details? }`.
 * Services throw ApiError; the gateway's error plugin turns it into the HTTP answer.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  too_many_emails: 400,
  invalid_parameter: 400,
  content_too_long: 400,
  unauthorized: 401,
  /** A tool-server request from a browser origin that is not allowed (MCP_ALLOWED_ORIGINS). */
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  /** The request line and headers, or the body, did not arrive in time (slow clients hold no connection). */
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  /** A key's stored list rows are at their quota (LIST_MAX_STORED_ROWS_PER_KEY). */
  quota_exceeded: 429,
  /** The request line and headers exceed the HTTP parser's limit (16 KiB). */
  headers_too_large: 431,
  internal_error: 500,
  service_unavailable: 503,
  timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** Extra response headers the error needs (Retry-After on 503/429). */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    return this.details === undefined
      ? { error: this.code, message: this.message }
      : { error: this.code, message: this.message, details: this.details };
  }
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}

export const invalidParameter = (param: string, message: string): ApiError =>
  new ApiError('invalid_parameter', message, { details: { param } });
