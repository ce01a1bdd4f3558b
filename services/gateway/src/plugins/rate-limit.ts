/**
 * Rate limits per key and operation with @fastify/rate-limit: a fixed window that opens at the
 * key's first call, held in Redis in distributed mode so that every gateway replica draws on one
 * budget. Without a valid key the caller's address is the budget, so bad keys cannot flood.
 * One limiter per operation: a route declaring `config: { operation }` runs it as its first hook
 * (before the key check, so refused calls count), and the tool servers call it per tool call,
 * so both doors of an operation share one budget. The same holds for the limits of unbilled
 * routes: a call of the `email-verify_feedback` tool counts against the feedback doors'
 * RATE_LIMIT_EMAIL_VERIFY_FEEDBACK, which it would otherwise bypass.
 */
import { readFileSync } from 'node:fs';
import rateLimit from '@fastify/rate-limit';
import { ApiError, OPERATION_IDS, isApiError, type OperationId } from '@svc/contracts';
import { storeUnavailableError } from '@svc/jobs';
import type { Redis } from '@svc/jobs/redis';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { FEEDBACK_TOOL } from '../mcp/tools-feedback.ts';
import type { UnmeteredLimit } from '../types.ts';
import { hooksOf } from './auth.ts';

/** A script of the lua/ folder beside this module, read once at load (the build copies the folder beside the compiled files). */
const lua = (name: string): string => readFileSync(new URL(`./lua/${name}`, import.meta.url), 'utf8');

export type Limiter = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The limiter of each operation whose limit is on (a limit of 0 turns it off). */
    limiters: Partial<Record<OperationId, Limiter>>;
  }
}

export interface RateLimitOptions {
  limits: Record<OperationId, number>;
  /** Per-minute limits of routes that are not billed (0: off). */
  unmetered?: Partial<Record<UnmeteredLimit, number>>;
  windowMs: number;
  redis?: Redis;
  redisPrefix: string;
  onRejected: (operation: OperationId | UnmeteredLimit) => void;
}

/**
 * The budget's Redis name after `<prefix>:ratelimit:`: hash-tagged by the key id (or the caller's
 * address without a valid key), so that on a Redis Cluster each key's budgets live in its own
 * slot, beside its meter, rather than in no slot of their own choosing.
 */
/** Tools that are the door of an unbilled route: their calls draw on that route's budget. */
const TOOL_LIMITS: Readonly<Record<string, UnmeteredLimit>> = { [FEEDBACK_TOOL]: 'email-verify.feedback' };

/** The unbilled limit a tool server POST counts against: that of the tool its `tools/call` names, if any. */
function toolLimitOf(body: unknown): UnmeteredLimit | undefined {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    // A message without an id is a notification: no tool runs for it.
    if (typeof message !== 'object' || message === null || !('id' in message) || !('method' in message)) continue;
    if (message.method !== 'tools/call' || !('params' in message)) continue;
    const params: unknown = message.params;
    const name = typeof params === 'object' && params !== null && 'name' in params ? params.name : undefined;
    if (typeof name === 'string' && Object.hasOwn(TOOL_LIMITS, name)) return TOOL_LIMITS[name];
  }
  return undefined;
}

const budgetOf = (request: FastifyRequest, operation: OperationId | UnmeteredLimit): string =>
  `{${request.identity.key === null ? `ip:${request.ip}` : request.identity.key.id}}:${operation}`;

/**
 * A fixed window in Redis: the first call opens it (INCR, then PEXPIRE), later ones read what is
 * left of it. @fastify/rate-limit's own Redis store does the same but names its keys after the
 * route (`<method><url>-`), which a limiter used outside a route does not have: the names came
 * out as `undefinedundefined-...`, untagged. This store names a budget exactly `<prefix>:ratelimit:<budget>`.
 */
const WINDOW_SCRIPT = lua('rate-limit-window.lua');

type IncrCallback = (error: Error | null, result?: { current: number; ttl: number }) => void;

/** The connection with the window script defined on it (sent by its SHA, as ioredis does for defined commands). */
type WindowRedis = Redis & { rateLimitWindow(key: string, windowMs: number): Promise<unknown> };

function redisWindowStore(connection: Redis, namespace: string) {
  if (!('rateLimitWindow' in connection)) connection.defineCommand('rateLimitWindow', { numberOfKeys: 1, lua: WINDOW_SCRIPT });
  // Defined just above: the cast names what defineCommand added, as the meter's does.
  const redis = connection as WindowRedis;
  const parse = (reply: unknown): { current: number; ttl: number } => {
    if (!Array.isArray(reply) || typeof reply[0] !== 'number' || typeof reply[1] !== 'number')
      throw new Error('unexpected answer of the rate-limit script');
    return { current: reply[0], ttl: reply[1] };
  };
  return class RedisWindowStore {
    incr(budget: string, callback: IncrCallback, timeWindow: number): void {
      redis.rateLimitWindow(`${namespace}${budget}`, timeWindow).then(
        (reply) => {
          let result: { current: number; ttl: number };
          try {
            result = parse(reply);
          } catch (error) {
            callback(error instanceof Error ? error : new Error(String(error)));
            return;
          }
          callback(null, result);
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    }

    /** One store for every limiter: the budget names carry their operation already. */
    child(): RedisWindowStore {
      return this;
    }
  };
}

async function rateLimitPlugin(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    skipOnError: false,
    ...(options.redis === undefined ? {} : { store: redisWindowStore(options.redis, `${options.redisPrefix}:ratelimit:`) }),
    errorResponseBuilder: (_request, context) =>
      new ApiError(
        'rate_limited',
        `Rate limit of ${context.max} calls per ${Math.round(options.windowMs / 1000)} s exceeded; retry in ${Math.ceil(context.ttl / 1000)} s.`,
      ),
  });
  const limiters: Partial<Record<OperationId | UnmeteredLimit, Limiter>> = {};
  const limits: Array<[OperationId | UnmeteredLimit, number]> = [
    ...OPERATION_IDS.map((operation): [OperationId, number] => [operation, options.limits[operation]]),
    ...Object.entries(options.unmetered ?? {}).flatMap(([name, max]): Array<[UnmeteredLimit, number]> =>
      name === 'email-verify.feedback' && max !== undefined ? [[name, max]] : [],
    ),
  ];
  for (const [operation, max] of limits) {
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
    const name = route.config?.operation ?? route.config?.unmeteredLimit;
    const limiter = name === undefined ? undefined : limiters[name];
    if (limiter !== undefined) route.onRequest = [limiter, ...hooksOf(route.onRequest)];
    // A tool server: its tool calls are known once the body is read (the billed ones are limited by the route itself).
    if (route.config?.toolOperations !== undefined) {
      const byTool: Limiter = async (request, reply) => {
        const limit = toolLimitOf(request.body);
        if (limit !== undefined) await limiters[limit]?.(request, reply);
      };
      route.preHandler = [byTool, ...hooksOf(route.preHandler)];
    }
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth'] });
