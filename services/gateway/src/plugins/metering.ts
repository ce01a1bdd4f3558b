/**
 * Metering, decided by route configuration: a route declaring `config: { operation }` (or a tool
 * server declaring `toolOperations`) is metered. This plugin is the one place that writes the
 * cost headers: `X-Service-Cost` on every response of a metered route (`0` unless the call was
 * charged, 401 included) and `X-Service-Free-Remaining` on charged ones.
 *
 * A call is charged once, when its answer is ready and its caller still there; a caller that
 * left first costs nothing, uses no allowance and is counted as `client_gone`. HEAD on a metered
 * route is refused: it would run and bill the job for no body.
 */
import { ApiError, OPERATIONS, billingPeriod, formatUsd, type OperationId } from '@svc/contracts';
import { CallerGoneError, storeUnavailableError } from '@svc/jobs';
import type { CallOutcome, GatewayMetrics } from '@svc/telemetry';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { sendError } from '../errors/api-errors.ts';
import type { Meter } from '../stores/meter.ts';

export const COST_HEADER = 'X-Service-Cost';
export const FREE_REMAINING_HEADER = 'X-Service-Free-Remaining';

export interface ChargeResult {
  costMicroUsd: number;
  freeRemaining: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Meters one successful call of `operation` and sets its cost headers; throws
     * CallerGoneError (and charges nothing) when the caller has left.
     */
    charge(request: FastifyRequest, reply: FastifyReply, operation: OperationId): Promise<ChargeResult>;
  }
}

export interface MeteringOptions {
  meter: Meter;
  freeAllowances: Record<OperationId, number>;
  metrics: GatewayMetrics;
}

export function outcomeOf(status: number): CallOutcome {
  if (status < 400) return 'success';
  if (status === 401) return 'unauthorized';
  if (status === 429) return 'rate_limited';
  if (status === 503) return 'unavailable';
  if (status === 504) return 'timeout';
  return status < 500 ? 'client_error' : 'server_error';
}

const isMeteredRoute = (config: { operation?: unknown; toolOperations?: unknown } | undefined): boolean =>
  config?.operation !== undefined || config?.toolOperations !== undefined;

function meteringPlugin(app: FastifyInstance, options: MeteringOptions, done: (error?: Error) => void): void {
  const { metrics } = options;
  /** Requests whose charge was decided (the caller was there when the answer was ready). */
  const charged = new WeakSet<FastifyRequest>();

  app.decorate('charge', async (request: FastifyRequest, reply: FastifyReply, operation: OperationId): Promise<ChargeResult> => {
    const key = request.identity.key;
    if (key === null) throw new Error('charge() called without an authenticated key');
    if (request.callerGone.aborted) throw new CallerGoneError();
    // Decided now: a caller leaving from here on was there when its answer was ready.
    charged.add(request);
    const allowance = key.freeAllowance[operation] ?? options.freeAllowances[operation];
    let charge;
    try {
      charge = await options.meter.record(key.id, operation, billingPeriod(), allowance);
    } catch (error) {
      charged.delete(request);
      throw storeUnavailableError('meter', error);
    }
    const costMicroUsd = charge.billable ? OPERATIONS[operation].priceMicroUsd : 0;
    metrics.cost.inc({ operation }, costMicroUsd / 1_000_000);
    reply.header(COST_HEADER, formatUsd(costMicroUsd));
    reply.header(FREE_REMAINING_HEADER, String(charge.freeRemaining));
    return { costMicroUsd, freeRemaining: charge.freeRemaining };
  });

  // Paths of metered routes: a wrong method on one is answered (405) with its cost too.
  const meteredPaths = new Set<string>();
  app.addHook('onRoute', (route) => {
    if (isMeteredRoute(route.config)) meteredPaths.add(route.url);
  });

  app.addHook('onRequest', (request, reply, next) => {
    if (request.method === 'HEAD' && request.routeOptions.config.operation !== undefined) {
      reply.header('Allow', 'GET');
      void sendError(reply, new ApiError('method_not_allowed', `HEAD is not allowed on ${request.routeOptions.url}; use GET.`));
      return;
    }
    next();
  });
  app.onCallerGone((request) => {
    // The answer will never be sent: this is the call's only outcome.
    if (request.operation !== undefined) {
      metrics.calls.inc({ operation: request.operation, outcome: charged.has(request) ? 'success' : 'client_gone' });
    }
  });

  app.addHook('onSend', (request, reply, payload, next) => {
    // A request that matched no route (a 405 on a metered path) is costed by its path.
    const metered =
      isMeteredRoute(request.routeOptions.config) ||
      (request.routeOptions.url === undefined && meteredPaths.has(request.url.split('?')[0] ?? ''));
    if (metered && !reply.hasHeader(COST_HEADER)) reply.header(COST_HEADER, '0');
    next(null, payload);
  });

  app.addHook('onResponse', (request, reply, next) => {
    if (request.operation !== undefined) {
      const labels = { operation: request.operation, outcome: outcomeOf(reply.statusCode) };
      metrics.calls.inc(labels);
      metrics.callDuration.observe(labels, (performance.now() - request.startedAt) / 1_000);
    }
    next();
  });
  done();
}

export default fp(meteringPlugin, { name: 'metering', dependencies: ['observability'] });
