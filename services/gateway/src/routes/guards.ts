import type { OperationId } from '@svc/contracts';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { requireKey, unauthorized } from '../plugins/auth.ts';
import type { ApiKeyRecord } from '../stores/key-store.ts';

/**
 * The hooks every billable route runs before anything else: its rate limit first (so a call
 * counts even when it is then refused), then the key check. Validation comes after both.
 */
export function operationGuards(app: FastifyInstance, operation: OperationId): onRequestHookHandler[] {
  const limiter = app.limiters[operation];
  return limiter === undefined ? [requireKey] : [limiter, requireKey];
}

/** The key of a route guarded by `requireKey`, typed as present (and refused if it somehow is not). */
export function callerKey(request: FastifyRequest): ApiKeyRecord {
  if (request.identity.key === null) throw unauthorized(request.identity);
  return request.identity.key;
}

export const BEARER_SECURITY = [{ bearerAuth: [] }];
