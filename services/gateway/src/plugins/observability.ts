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
 *
 * Hooks here and in the other per-request plugins take fastify's `done` callback rather than
 * being async: an async hook costs a promise and a microtask turn per request and hook.
 */
import { redactUrl, type AccessLog, type GatewayMetrics } from '@svc/telemetry';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

const CALLER_GONE_STATUS = 499;

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Runs `listener` for each request whose caller leaves before its answer was sent (once, with
     * the request): one list called from the one `close` listener each request has anyway,
     * instead of a listener per plugin and request on its signal.
     */
    onCallerGone(listener: (request: FastifyRequest) => void): void;
  }
}

function observabilityPlugin(
  app: FastifyInstance,
  options: { metrics: GatewayMetrics; accessLog: AccessLog },
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
    accessLog.write(
      { reqId: request.id, method: request.method, url: redactUrl(request.url), statusCode: status, responseTime: elapsedMs },
      status === CALLER_GONE_STATUS ? 'request abandoned by its caller' : 'request completed',
    );
  };

  const goneListeners: Array<(request: FastifyRequest) => void> = [];
  app.decorate('onCallerGone', (listener: (request: FastifyRequest) => void) => void goneListeners.push(listener));

  app.decorateRequest('operation', undefined);
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('callerLeft', false);
  app.decorateRequest('callerGoneController', null);
  // The signal is made when something reads it (a job that waits, a tool call's cancellation):
  // one per request cost about 2 % of the embedded gateway's CPU under bench:qr's load, and a QR
  // call never reads it (metering asks `callerLeft`).
  app.decorateRequest('callerGone', {
    getter(this: FastifyRequest): AbortSignal {
      let controller = this.callerGoneController;
      if (controller === null) {
        controller = new AbortController();
        if (this.callerLeft) controller.abort();
        this.callerGoneController = controller;
      }
      return controller.signal;
    },
  });
  app.addHook('onRequest', (request, reply, next) => {
    request.startedAt = performance.now();
    request.operation = request.routeOptions.config.operation;
    reply.header('X-Request-Id', request.id);
    metrics.inflight.inc();
    // `close` comes once per response: `on` spares the wrapper `once` makes.
    reply.raw.on('close', () => {
      if (reply.raw.writableFinished) return;
      request.callerLeft = true;
      request.callerGoneController?.abort();
      for (const listener of goneListeners) listener(request);
      observe(request, CALLER_GONE_STATUS);
    });
    next();
  });
  app.addHook('onResponse', (request, reply, next) => {
    observe(request, reply.statusCode);
    next();
  });
  done();
}

export default fp(observabilityPlugin, { name: 'observability' });
