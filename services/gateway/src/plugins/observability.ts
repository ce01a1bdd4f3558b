/**
 * Request ids, request metrics, the operation a request performs, and whether its caller is
 * still there. The route label is the route's pattern (never the raw URL), and unmatched paths
 * share one label, so label values stay bounded whatever callers send.
 *
 * A caller that closes its connection before the answer is sent never sees a response, so
 * fastify's onResponse does not run: the raw response's `close` marks the request as abandoned
 * (`request.callerGone`) and records it with status 499, the access-log convention for it.
 *
 * The access log is here too: one line per request when it ends (fastify's own two lines, on
 * arrival and on completion, are off), with the URL redacted.
 */
import { redactUrl, type GatewayMetrics, type Logger } from '@svc/telemetry';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

const CALLER_GONE_STATUS = 499;

function observabilityPlugin(
  app: FastifyInstance,
  options: { metrics: GatewayMetrics; accessLog: Logger },
  done: (error?: Error) => void,
): void {
  const { metrics, accessLog } = options;
  const observed = new WeakSet<FastifyRequest>();
  const observe = (request: FastifyRequest, status: number) => {
    // Once per request, whichever of finish, error or close comes first.
    if (observed.has(request)) return;
    observed.add(request);
    metrics.inflight.dec();
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(status) };
    const elapsedMs = performance.now() - request.startedAt;
    metrics.requestDuration.observe(labels, elapsedMs / 1_000);
    metrics.requests.inc(labels);
    if (accessLog.isLevelEnabled('info')) {
      const line = { reqId: request.id, method: request.method, url: redactUrl(request.url), statusCode: status, responseTime: elapsedMs };
      accessLog.info(line, status === CALLER_GONE_STATUS ? 'request abandoned by its caller' : 'request completed');
    }
  };

  app.decorateRequest('operation', undefined);
  app.decorateRequest('startedAt', 0);
  // Reference-type defaults are refused by fastify; every request gets its own below.
  app.decorateRequest('callerGone', null as unknown as AbortSignal);
  app.addHook('onRequest', async (request, reply) => {
    request.startedAt = performance.now();
    request.operation = request.routeOptions.config.operation;
    reply.header('X-Request-Id', request.id);
    metrics.inflight.inc();
    const gone = new AbortController();
    request.callerGone = gone.signal;
    reply.raw.once('close', () => {
      if (reply.raw.writableFinished) return;
      gone.abort();
      observe(request, CALLER_GONE_STATUS);
    });
  });
  app.addHook('onResponse', async (request, reply) => observe(request, reply.statusCode));
  done();
}

export default fp(observabilityPlugin, { name: 'observability' });
