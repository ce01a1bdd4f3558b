/**
 * Every error leaves in the contract's shape `{ error, message, details? }`, fastify's own
 * included (404, 405, 413, 415, malformed or empty JSON): no default error body leaks, and a bug
 * answers `internal_error` with the request id while the stack goes to the log only. A path that
 * exists under other methods answers 405 before its body is read, whatever that body is, and an
 * HTTP/1.1 request without Host is 400 before anything else looks at it.
 */
import { ApiError } from '@svc/contracts';
import { CallerGoneError } from '@svc/jobs';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { apiErrorLog, missingBody, sendError, toApiError, type ApiErrorLog } from '../errors/api-errors.ts';
import { hasBody } from '../request-body.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

const MISSING_HOST = () => new ApiError('invalid_request', 'The request has no Host header, which HTTP/1.1 requires; send one.');

declare module 'fastify' {
  interface FastifyInstance {
    /** Logs a request or tool call that failed (api-errors.ts); one set of windows for the whole gateway. */
    logApiError: ApiErrorLog;
  }
}

export interface ErrorsOptions {
  /** The window of the backend refusals' log (LOG_ERROR_WINDOW_MS). */
  errorWindowMs: number;
}

function errorsPlugin(app: FastifyInstance, options: ErrorsOptions, done: (error?: Error) => void): void {
  app.decorate('logApiError', apiErrorLog(options.errorWindowMs));
  // Every route's methods and path pattern (`:id` matches one segment), to tell a wrong method
  // (405) from a wrong path (404) on parametric paths too. Metered GET routes refuse HEAD (it
  // would run and bill the job for no body): not in their Allow.
  const routes: Array<{ methods: string[]; pattern: RegExp; metered: boolean }> = [];
  app.addHook('onRoute', (route) => {
    const source = route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+');
    routes.push({
      methods: [route.method].flat(),
      pattern: new RegExp(`^${source}$`),
      metered: route.config?.operation !== undefined,
    });
  });
  const allowedMethods = (path: string): string[] => {
    const matching = routes.filter((route) => route.pattern.test(path));
    return METHODS.filter((method) => matching.some((route) => route.methods.includes(method) && !(method === 'HEAD' && route.metered)));
  };

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof CallerGoneError) {
      // Nobody reads this answer: the socket is closed. 499 is what the access log records.
      request.log.info('the caller left before the answer was ready; not billed');
      return reply.code(499).send();
    }
    // docs/api.md, "Errors": a missing body is invalid_request whatever its content type says.
    const apiError = error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' && !hasBody(request) ? missingBody() : toApiError(error, request.id);
    app.logApiError(request.log, error, apiError);
    return sendError(reply, apiError);
  });

  // Before the body is parsed: a wrong method is 405 even with a body fastify would refuse.
  app.addHook('onRequest', (request, reply, next) => {
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is refused (Node's own check is off, app.ts).
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      void sendError(reply, MISSING_HOST());
      return;
    }
    if (!request.is404) return next();
    const path = request.url.split('?')[0] ?? '/';
    const allowed = allowedMethods(path);
    if (allowed.length === 0) return next();
    reply.header('Allow', allowed.join(', '));
    // Answered here: the request goes no further (a callback hook that replies does not call next).
    void sendError(reply, new ApiError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(' or ')}.`));
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    return sendError(reply, new ApiError('not_found', `No route ${request.method} ${path}.`));
  });
  done();
}

export default fp(errorsPlugin, { name: 'errors' });
