import type { OperationId } from '@svc/contracts';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { requireKey } from '../plugins/auth.ts';

/**
 * The hooks every billable route runs before anything else: its rate limit first (so a call
 * counts even when it is then refused), then the key check. Validation comes after both.
 */
export function operationGuards(app: FastifyInstance, operation: OperationId): onRequestHookHandler[] {
  const limiter = app.limiters[operation];
  return limiter === undefined ? [requireKey] : [limiter, requireKey];
}

export const BEARER_SECURITY = [{ bearerAuth: [] }];
