/**
 * Request ids, request metrics and the operation a request performs. The route label is the
 * route's pattern (never the raw URL), and unmatched paths share one label, so label values
 * stay bounded whatever callers send.
 */
import type { GatewayMetrics } from '@svc/telemetry';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

function observabilityPlugin(app: FastifyInstance, options: { metrics: GatewayMetrics }, done: (error?: Error) => void): void {
  const { metrics } = options;
  app.decorateRequest('operation', undefined);
  app.decorateRequest('startedAt', 0);
  app.addHook('onRequest', async (request, reply) => {
    request.startedAt = performance.now();
    request.operation = request.routeOptions.config.operation;
    reply.header('X-Request-Id', request.id);
    metrics.inflight.inc();
  });
  app.addHook('onResponse', async (request, reply) => {
    metrics.inflight.dec();
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) };
    metrics.requestDuration.observe(labels, (performance.now() - request.startedAt) / 1_000);
    metrics.requests.inc(labels);
  });
  done();
}

export default fp(observabilityPlugin, { name: 'observability' });
