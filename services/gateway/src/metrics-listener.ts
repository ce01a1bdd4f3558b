/**
 * `/metrics` on a port of its own (GATEWAY_METRICS_PORT, default 9102), never on the public API
 * port, where it is `404` like any unknown path: request, revenue and traffic counters are for
 * the operator's Prometheus, not the internet (decisions, "Other routes"). A small fastify
 * instance of its own, so that its refusals keep the contract's error format.
 */
import { ApiError } from '@svc/contracts';
import Fastify, { type FastifyInstance } from 'fastify';
import { sendError } from './errors/api-errors.ts';

export function buildMetricsListener(render: () => Promise<{ contentType: string; body: string }>): FastifyInstance {
  const app = Fastify({ logger: false, keepAliveTimeout: 5_000, http: { headersTimeout: 10_000 } });
  app.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await render();
    return reply.type(contentType).send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0] ?? '/'}; this port serves GET /metrics.`),
    ),
  );
  return app;
}
