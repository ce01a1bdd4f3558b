/**
 * Rate limits per key and operation with @fastify/rate-limit: a fixed window that opens at the
 * key's first call, held in Redis in distributed mode so that every gateway replica draws on one
 * budget. Without a valid key the caller's address is the budget, so bad keys cannot flood.
 * One limiter per operation: a route declaring `config: { operation }` runs it as its first hook
 * (before the key check, so refused calls count), and the tool servers call it per tool call,
 * so both doors of an operation share one budget.
 */
import rateLimit from '@fastify/rate-limit';
import { ApiError, OPERATION_IDS, isApiError, type OperationId } from '@svc/contracts';
import { storeUnavailableError } from '@svc/jobs';
import type { Redis } from '@svc/jobs/redis';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hooksOf } from './auth.ts';

export type Limiter = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The limiter of each operation whose limit is on (a limit of 0 turns it off). */
    limiters: Partial<Record<OperationId, Limiter>>;
  }
}

export interface RateLimitOptions {
  limits: Record<OperationId, number>;
  windowMs: number;
  redis?: Redis;
  redisPrefix: string;
  onRejected: (operation: OperationId) => void;
}

const budgetOf = (request: FastifyRequest, operation: OperationId): string =>
  `${operation}:${request.identity.key === null ? `ip:${request.ip}` : `key:${request.identity.key.id}`}`;

async function rateLimitPlugin(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    skipOnError: false,
    ...(options.redis === undefined ? {} : { redis: options.redis, nameSpace: `${options.redisPrefix}:ratelimit:` }),
    errorResponseBuilder: (_request, context) =>
      new ApiError(
        'rate_limited',
        `Rate limit of ${context.max} calls per ${Math.round(options.windowMs / 1000)} s exceeded; retry in ${Math.ceil(context.ttl / 1000)} s.`,
      ),
  });
  const limiters: Partial<Record<OperationId, Limiter>> = {};
  for (const operation of OPERATION_IDS) {
    const max = options.limits[operation];
    if (max === 0) continue;
    const handler = app.rateLimit({
      max,
      timeWindow: options.windowMs,
      keyGenerator: (request) => budgetOf(request, operation),
      onExceeded: () => options.onRejected(operation),
    });
    limiters[operation] = async (request, reply) => {
      try {
        await handler.call(app, request, reply);
      } catch (error) {
        // The store failing (Redis gone) must not pass for "no limit" nor for a bug.
        throw isApiError(error) ? error : storeUnavailableError('rate limiter', error);
      }
    };
  }
  app.decorate('limiters', limiters);
  app.addHook('onRoute', (route) => {
    const limiter = route.config?.operation === undefined ? undefined : limiters[route.config.operation];
    if (limiter !== undefined) route.onRequest = [limiter, ...hooksOf(route.onRequest)];
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth'] });
