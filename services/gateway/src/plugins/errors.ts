/**
 * Every error leaves in the contract's shape `{ error, message, details? }`, fastify's own
 * included (404, 405, 413, 415, malformed or empty JSON): no default error body leaks, and a bug
 * answers `internal_error` with the request id while the stack goes to the log only.
 */
import { ApiError, isApiError } from '@svc/contracts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

const FASTIFY_CODES: Record<string, () => ApiError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('payload_too_large', 'The request body is larger than 64 KiB.'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ApiError('unsupported_media_type', 'Send the body as application/json.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('invalid_request', 'The Content-Length header does not match the body.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ApiError('invalid_request', 'The request body is missing; send a JSON object.'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ApiError('invalid_request', 'The request body is not valid JSON.'),
  FST_ERR_BAD_URL: () => new ApiError('invalid_request', 'The request URL is malformed.'),
};

export function toApiError(error: FastifyError | Error, requestId: string): ApiError {
  if (isApiError(error)) return error;
  const code = (error as FastifyError).code;
  const mapped = code === undefined ? undefined : FASTIFY_CODES[code];
  if (mapped !== undefined) return mapped();
  // The JSON parser throws a SyntaxError marked 400 for malformed bodies.
  if (error instanceof SyntaxError && (error as FastifyError).statusCode === 400) {
    return new ApiError('invalid_request', 'The request body is not valid JSON.');
  }
  const status = (error as FastifyError).statusCode;
  if (status === 413) return FASTIFY_CODES.FST_ERR_CTP_BODY_TOO_LARGE!();
  if (status === 415) return FASTIFY_CODES.FST_ERR_CTP_INVALID_MEDIA_TYPE!();
  if (status !== undefined && status >= 400 && status < 500) return new ApiError('invalid_request', 'The request is malformed.');
  return new ApiError('internal_error', `Something went wrong on our side; quote request id ${requestId} when reporting it.`, {
    details: { requestId },
  });
}

function hasNoBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.toBody());
}

function errorsPlugin(app: FastifyInstance, _options: unknown, done: (error?: Error) => void): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // docs/api.md, "Errors": a missing body is invalid_request whatever its content type says.
    const apiError =
      error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' && hasNoBody(request)
        ? FASTIFY_CODES.FST_ERR_CTP_EMPTY_JSON_BODY!()
        : toApiError(error, request.id);
    if (apiError.status >= 500) request.log.error({ err: error.cause ?? error, code: apiError.code }, 'request failed');
    else request.log.info({ code: apiError.code }, apiError.message);
    return sendError(reply, apiError);
  });

  // A path that exists under another method is 405 with Allow; anything else 404.
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter(
      (method) => method !== request.method && app.hasRoute({ method, url: path }),
    );
    if (allowed.length > 0) {
      reply.header('Allow', [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].join(', '));
      return sendError(reply, new ApiError('method_not_allowed', `${request.method} is not allowed on ${path}.`));
    }
    return sendError(reply, new ApiError('not_found', `No route ${request.method} ${path}.`));
  });
  done();
}

export default fp(errorsPlugin, { name: 'errors' });
