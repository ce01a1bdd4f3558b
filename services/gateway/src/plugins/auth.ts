/**
 * Authentication, decided by route configuration: a route declaring `config: { auth: 'key' }`
 * needs a valid API key. A global hook identifies the caller of such a route (never rejecting),
 * so that the rate limiter can count a bad key against its client address; the route's own
 * last onRequest hook then answers 401 (RFC 6750 challenge, `error="invalid_token"` for a
 * presented but unknown or revoked key).
 */
import { ApiError } from '@svc/contracts';
import { storeUnavailableError } from '@svc/jobs';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { parseAuthorization } from '../auth/api-keys.ts';
import type { KeyStore } from '../stores/key-store.ts';
import type { Identity } from '../types.ts';

const NO_KEY: Identity = { key: null, credential: 'missing' };

export async function identify(keys: KeyStore, header: string | undefined, allowBasic = false): Promise<Identity> {
  const presented = parseAuthorization(header, allowBasic);
  if (presented.kind !== 'token') return { key: null, credential: presented.kind };
  let record;
  try {
    record = await keys.authenticate(presented.token);
  } catch (error) {
    throw storeUnavailableError('key store', error);
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

const requireKey: onRequestHookHandler = (request: FastifyRequest, _reply, done) => {
  done(request.identity.key === null ? unauthorized(request.identity) : undefined);
};

/** A route's onRequest hooks as a list, whatever form the route gave them. */
export function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? [...hooks] : [hooks];
}

function authPlugin(app: FastifyInstance, options: { keys: KeyStore }, done: (error?: Error) => void): void {
  // Reference-type defaults are refused by fastify; every request gets its own in the hook below.
  app.decorateRequest('identity', null as unknown as Identity);
  app.addHook('onRequest', (request, _reply, next) => {
    if (request.routeOptions.config.auth !== 'key') {
      request.identity = NO_KEY;
      next();
      return;
    }
    identify(options.keys, request.headers.authorization, request.routeOptions.config.basicAuth === true).then((identity) => {
      request.identity = identity;
      next();
    }, next);
  });
  // The key check comes last among a route's own hooks: its rate limit counts refused calls too.
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === 'key') route.onRequest = [...hooksOf(route.onRequest), requireKey];
  });
  done();
}

export default fp(authPlugin, { name: 'auth' });
