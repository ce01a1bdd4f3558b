/**
 * Authentication in two steps. A global hook identifies the caller (never rejecting), so that the
 * rate limiter can count a bad key against its client address; `requireKey` then answers 401 on
 * the routes that need a key (RFC 6750 challenge, `error="invalid_token"` for a presented but
 * unknown or revoked key).
 */
import { ApiError } from '@svc/contracts';
import { unavailableError } from '@svc/jobs';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { parseAuthorization } from '../auth/api-keys.ts';
import type { KeyStore } from '../stores/key-store.ts';
import type { Identity } from '../types.ts';

const NO_KEY: Identity = { key: null, credential: 'missing' };

export async function identify(keys: KeyStore, header: string | undefined): Promise<Identity> {
  const presented = parseAuthorization(header);
  if (presented.kind !== 'token') return { key: null, credential: presented.kind };
  let record;
  try {
    record = await keys.authenticate(presented.token);
  } catch (error) {
    throw unavailableError(error);
  }
  if (record === null) return { key: null, credential: 'unknown' };
  if (record.revoked) return { key: null, credential: 'revoked' };
  return { key: record, credential: 'valid' };
}

export function unauthorized(identity: Identity): ApiError {
  const presented = identity.credential === 'unknown' || identity.credential === 'revoked';
  const message =
    identity.credential === 'missing'
      ? 'Send your API key as `Authorization: Bearer <API_KEY>`.'
      : identity.credential === 'malformed'
        ? 'The Authorization header must be `Bearer <API_KEY>`.'
        : identity.credential === 'revoked'
          ? 'This API key has been revoked.'
          : 'This API key is not valid.';
  return new ApiError('unauthorized', message, {
    headers: { 'WWW-Authenticate': presented ? 'Bearer realm="api", error="invalid_token"' : 'Bearer realm="api"' },
  });
}

export const requireKey: onRequestHookHandler = (request: FastifyRequest, _reply, done) => {
  done(request.identity.key === null ? unauthorized(request.identity) : undefined);
};

function authPlugin(app: FastifyInstance, options: { keys: KeyStore }, done: (error?: Error) => void): void {
  // Reference-type defaults are refused by fastify; every request gets its own in the hook below.
  app.decorateRequest('identity', null as unknown as Identity);
  app.addHook('onRequest', async (request) => {
    const needsKey = request.url.startsWith('/v1/') || request.url.startsWith('/api/mcp/');
    request.identity = needsKey ? await identify(options.keys, request.headers.authorization) : NO_KEY;
  });
  done();
}

export default fp(authPlugin, { name: 'auth' });
