/**
 * Metering: a successful call of a billable operation is recorded once, after its job succeeded,
 * and answers its cost and remaining free allowance. Every response of a metered route carries
 * `X-Service-Cost` (`0` for errors, 401 included); rejected calls cost nothing.
 */
import { OPERATIONS, billingPeriod, formatUsd, type OperationId } from '@svc/contracts';
import { unavailableError } from '@svc/jobs';
import type { CallOutcome, GatewayMetrics } from '@svc/telemetry';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Meter } from '../stores/meter.ts';

export const COST_HEADER = 'X-Service-Cost';
export const FREE_REMAINING_HEADER = 'X-Service-Free-Remaining';

export interface ChargeResult {
  costMicroUsd: number;
  freeRemaining: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Meters one successful call of the request's operation and sets the cost headers. */
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

function meteringPlugin(app: FastifyInstance, options: MeteringOptions, done: (error?: Error) => void): void {
  app.decorate('charge', async (request: FastifyRequest, reply: FastifyReply, operation: OperationId): Promise<ChargeResult> => {
    const key = request.identity.key;
    if (key === null) throw new Error('charge() called without an authenticated key');
    const allowance = key.freeAllowance[operation] ?? options.freeAllowances[operation];
    let charge;
    try {
      charge = await options.meter.record(key.id, operation, billingPeriod(), allowance);
    } catch (error) {
      throw unavailableError(error);
    }
    const costMicroUsd = charge.billable ? OPERATIONS[operation].priceMicroUsd : 0;
    options.metrics.cost.inc({ operation }, costMicroUsd / 1_000_000);
    reply.header(COST_HEADER, formatUsd(costMicroUsd));
    reply.header(FREE_REMAINING_HEADER, String(charge.freeRemaining));
    return { costMicroUsd, freeRemaining: charge.freeRemaining };
  });

  app.addHook('onSend', async (request, reply, payload) => {
    if (request.operation !== undefined && !reply.hasHeader(COST_HEADER)) reply.header(COST_HEADER, '0');
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    if (request.operation === undefined) return;
    const labels = { operation: request.operation, outcome: outcomeOf(reply.statusCode) };
    options.metrics.calls.inc(labels);
    options.metrics.callDuration.observe(labels, (performance.now() - request.startedAt) / 1_000);
  });
  done();
}

export default fp(meteringPlugin, { name: 'metering' });
