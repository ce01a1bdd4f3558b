/**
 * How long a request's body may take to arrive: REQUEST_BODY_TIMEOUT_MS from the start of the
 * request, or what its route allows (`config.bodyTimeoutMs`: a 16 MiB list upload over a slow
 * uplink needs minutes). A body still arriving then is answered `408 request_timeout` and its
 * connection closed; after an early answer (401, 413), the rest of the body is read and dropped
 * only until then. Node's own request timeout is set to the longest route's allowance, and the
 * header section keeps its own short limit (slowloris).
 */
import { ApiError } from '@svc/contracts';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { sendError } from '../errors/api-errors.ts';
import { hasBody } from '../request-body.ts';

/** Any body but a list upload: 30 s is ample for 64 KiB. */
export const REQUEST_BODY_TIMEOUT_MS = 30_000;
/** A list upload: 16 MiB in 10 minutes is 28 KB/s, the slowest uplink worth serving. */
export const LIST_UPLOAD_TIMEOUT_MS = 10 * 60_000;

function bodyTimeoutPlugin(app: FastifyInstance, _options: unknown, done: (error?: Error) => void): void {
  app.addHook('onRequest', (request, reply, next) => {
    if (request.raw.complete || !hasBody(request)) {
      next();
      return;
    }
    const timer = setTimeout(() => {
      if (request.raw.complete || request.raw.socket.destroyed) return;
      if (reply.sent) {
        request.raw.socket.destroy();
        return;
      }
      reply.header('connection', 'close');
      void sendError(reply, new ApiError('request_timeout', 'The request body did not arrive in time; send it again.'));
    }, request.routeOptions.config.bodyTimeoutMs ?? REQUEST_BODY_TIMEOUT_MS);
    request.raw.once('end', () => clearTimeout(timer));
    next();
  });
  done();
}

export default fp(bodyTimeoutPlugin, { name: 'body-timeout' });
