/**
 * How long a request's body may take to arrive: REQUEST_BODY_TIMEOUT_MS (configuration) from the
 * start of the request, or what its route allows (`config.bodyTimeoutMs`: a 16 MiB list upload
 * over a slow uplink needs minutes) once the caller's key has been accepted: an unauthenticated
 * upload gets no more time than any body. A body still arriving then is answered `408 request_timeout` and
 * its connection closed. Node's own request timeout is set to the longest route's allowance,
 * and the header section keeps its own short limit (slowloris).
 */
import { ApiError } from '@svc/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { sendError } from '../errors/api-errors.ts';
import { hasBody } from '../request-body.ts';

export interface BodyTimeoutOptions {
  /** Any body's allowance from the request's start (30 s by default: ample for 64 KiB). */
  bodyTimeoutMs: number;
}

function bodyTimeoutPlugin(app: FastifyInstance, options: BodyTimeoutOptions, done: (error?: Error) => void): void {
  const timers = new WeakMap<FastifyRequest, { startedAt: number; timer: NodeJS.Timeout }>();
  const arm = (request: FastifyRequest, reply: FastifyReply, startedAt: number, allowanceMs: number) => {
    const timer = setTimeout(
      () => {
        if (request.raw.complete || request.raw.socket.destroyed) return;
        if (reply.sent) {
          request.raw.socket.destroy();
          return;
        }
        reply.header('connection', 'close');
        void sendError(reply, new ApiError('request_timeout', 'The request body did not arrive in time; send it again.'));
      },
      Math.max(0, startedAt + allowanceMs - Date.now()),
    );
    timers.set(request, { startedAt, timer });
    return timer;
  };
  app.addHook('onRequest', (request, reply, next) => {
    if (request.raw.complete || !hasBody(request)) {
      next();
      return;
    }
    const timer = arm(request, reply, Date.now(), options.bodyTimeoutMs);
    request.raw.once('end', () => clearTimeout(timers.get(request)?.timer ?? timer));
    next();
  });
  // Past every onRequest hook, the key check included: the route's longer allowance now applies.
  app.addHook('preParsing', (request, reply, payload, next) => {
    const armed = timers.get(request);
    const allowanceMs = request.routeOptions.config.bodyTimeoutMs;
    if (armed !== undefined && allowanceMs !== undefined && !request.raw.complete) {
      clearTimeout(armed.timer);
      arm(request, reply, armed.startedAt, allowanceMs);
    }
    next(null, payload);
  });
  done();
}

export default fp(bodyTimeoutPlugin, { name: 'body-timeout' });
