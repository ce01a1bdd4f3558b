/**
 * Metering, decided by route configuration: a route declaring `config: { operation }` (or a tool
 * server declaring `toolOperations`) is metered. This plugin is the one place that writes the
 * cost headers: `X-Service-Cost` on every response of a metered route (`0` unless the call was
 * charged, 401 included) and `X-Service-Free-Remaining` on charged ones.
 *
 * A call is charged once, for the operation its request carries (`request.operation`: the route's,
 * or the tool call's), when its answer is ready and its caller still there; a caller that left
 * first costs nothing, uses no allowance and is counted as `client_gone`. What it costs and which
 * allowance it uses is @svc/metering's billing rule. HEAD on a metered
 * route is refused: it would run and bill the job for no body.
 *
 * A record whose answer was lost (a primary dead after running it) is sent again under the same
 * charge id within the request's deadline, and voided later if it cannot be confirmed
 * (@svc/metering's ChargeRecorder): the call is answered 200 and billed once, or answered 503 and
 * not billed.
 */
import { ApiError, formatUsd, type OperationId } from '@svc/contracts';
import { CallerGoneError, storeUnavailableError } from '@svc/jobs';
import { ChargeRecorder, allowanceFor, billingPeriod, costOf, type FreeAllowances, type Meter, type VoidReport } from '@svc/metering';
import type { CallOutcome, GatewayMetrics } from '@svc/telemetry';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { sendError } from '../errors/api-errors.ts';

export const COST_HEADER = 'X-Service-Cost';
export const FREE_REMAINING_HEADER = 'X-Service-Free-Remaining';

export interface ChargeResult {
  costMicroUsd: number;
  freeRemaining: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Meters the request's successful call of its operation and sets its cost headers; throws
     * CallerGoneError (and charges nothing) when the caller has left. `operation`, when a caller
     * names it, must be the request's own: it is checked, never charged instead.
     */
    charge(request: FastifyRequest, reply: FastifyReply, operation?: OperationId): Promise<ChargeResult>;
  }
}

export interface MeteringOptions {
  meter: Meter;
  freeAllowances: FreeAllowances;
  metrics: GatewayMetrics;
  /** How long a request of each operation may take (REQUEST_DEADLINE_MS): an unsure record is sent again within it. */
  deadlines: Readonly<Record<OperationId, number>>;
  /** Longest one meter record may take (REDIS_COMMAND_TIMEOUT_MS; 0 for a memory meter). */
  meterTimeoutMs: number;
}

/** The `outcome` label of a metered call answered with `status` (the calls counter's). */
export function callOutcome(status: number): CallOutcome {
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
  const recorder = new ChargeRecorder(options.meter, { attemptMs: options.meterTimeoutMs, report: (event) => reportVoid(app, event) });
  app.addHook('onClose', async () => recorder.close());

  app.decorate('charge', async (request: FastifyRequest, reply: FastifyReply, named?: OperationId): Promise<ChargeResult> => {
    const key = request.identity.key;
    const operation = request.operation;
    // Programming errors, not answers: a request is billed for what it carries, and only once.
    if (key === null) throw new Error('charge() called without an authenticated key');
    if (operation === undefined) throw new Error('charge() called on a request that carries no operation');
    if (named !== undefined && named !== operation) throw new Error(`charge(${named}) called on a request of ${operation}`);
    if (charged.has(request)) throw new Error(`charge() called twice on one request of ${operation}`);
    if (request.callerLeft) throw new CallerGoneError();
    // Decided now: a caller leaving from here on was there when its answer was ready.
    charged.add(request);
    const allowance = allowanceFor(operation, key.freeAllowance, options.freeAllowances);
    const retryUntil = Date.now() + options.deadlines[operation] - (performance.now() - request.startedAt);
    let charge;
    try {
      charge = await recorder.record({ keyId: key.id, operation, period: billingPeriod(), allowance }, retryUntil);
    } catch (error) {
      charged.delete(request);
      throw storeUnavailableError('meter', error);
    }
    const costMicroUsd = costOf(operation, charge.billable ? 1 : 0);
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
    // A streamed answer (a tool call's event stream) carries its cost as a trailer instead.
    if (metered && !reply.hasHeader(COST_HEADER) && !reply.hasTrailer(COST_HEADER)) reply.header(COST_HEADER, '0');
    next(null, payload);
  });

  app.addHook('onResponse', (request, reply, next) => {
    if (request.operation !== undefined) {
      const labels = { operation: request.operation, outcome: callOutcome(reply.statusCode) };
      metrics.calls.inc(labels);
      metrics.callDuration.observe(labels, (performance.now() - request.startedAt) / 1_000);
    }
    next();
  });
  done();
}

/** One line per charge left unsure (rare: a store lost while recording), for whoever audits a bill. */
function reportVoid(app: FastifyInstance, event: VoidReport): void {
  const { keyId, operation, period, chargeId } = event.call;
  const charge = { keyId, operation, period, chargeId };
  if (event.outcome === 'voided')
    app.log.warn(
      { charge, cancelledRecord: event.cancelledRecord },
      'unsure meter record voided: its call was answered service_unavailable and is not billed',
    );
  else
    app.log.error(
      { charge, reason: event.reason },
      'unsure meter record could not be voided: its call was answered service_unavailable and may be billed; credit the key by hand',
    );
}

export default fp(meteringPlugin, { name: 'metering', dependencies: ['observability'] });
