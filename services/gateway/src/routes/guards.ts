import type { FastifyRequest } from 'fastify';
import { unauthorized } from '../plugins/auth.ts';
import type { ApiKeyRecord } from '../stores/key-store.ts';

/** The key of a route configured with `auth: 'key'`, typed as present (and refused if it somehow is not). */
export function callerKey(request: FastifyRequest): ApiKeyRecord {
  if (request.identity.key === null) throw unauthorized(request.identity);
  return request.identity.key;
}

/** Routes that need a key say so in their OpenAPI operation. */
export const BEARER_SECURITY = [{ bearerAuth: [] }];
