import { ApiError } from '@svc/contracts';
import type { JobTransport } from '@svc/jobs';
import type { FastifyInstance } from 'fastify';
import { sendError } from '../errors/api-errors.ts';

export interface HealthOptions {
  transport: JobTransport;
  /** False once the process is draining (SIGTERM): load balancers stop sending new requests. */
  isAcceptingWork: () => boolean;
}

export function healthRoutes(app: FastifyInstance, options: HealthOptions, done: (error?: Error) => void): void {
  const hidden = { schema: { hide: true } };
  app.get('/healthz', hidden, () => ({ status: 'ok' }));
  app.get('/readyz', hidden, async (_request, reply) => {
    if (!options.isAcceptingWork())
      return sendError(reply, new ApiError('service_unavailable', 'Shutting down.', { headers: { 'Retry-After': '5' } }));
    if (!(await options.transport.isReady())) {
      return sendError(
        reply,
        new ApiError('service_unavailable', 'The job backend is not reachable.', { headers: { 'Retry-After': '5' } }),
      );
    }
    return { status: 'ready', transport: options.transport.kind };
  });
  done();
}
