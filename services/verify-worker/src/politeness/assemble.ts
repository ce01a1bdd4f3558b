/**
 * The politeness state of a deployment: in Redis when the worker has one (shared by every worker),
 * else in this process. Made once per process by `startVerifyProcess` (handler.ts), whose parts
 * the process's batch and list verifiers share, so both see the same back-offs, budgets and
 * parked connections.
 */
import type { Config } from '@svc/config';
import type { Redis } from '@svc/jobs/redis';
import { MemoryBackoffStore, RedisBackoffStore, type BackoffStore } from './provider-backoff.ts';
import { ProviderBudgets, parseBudgets } from './provider-budgets.ts';
import { IdleSessions } from '../smtp/idle-sessions.ts';
import type { GateEvents, SessionBudgets } from './session-gate.ts';
import { politenessEvents } from './metrics.ts';
import type { Registry } from 'prom-client';

export interface PolitenessState {
  backoff: BackoffStore;
  budgets?: SessionBudgets;
  /** Idle SMTP sessions of this process, for the next batch to the same server. */
  idle: IdleSessions;
  /** Back-offs, sessions and refusals as metrics on the process's registry. */
  events: GateEvents;
}

export function politenessState(config: Config, redis: Redis | undefined, registry: Registry | undefined): PolitenessState {
  const policy = { baseMs: config.VERIFY_THROTTLE_BACKOFF_MS };
  const budgets = parseBudgets(config.VERIFY_PROVIDER_BUDGETS);
  const windowMs = config.VERIFY_PROVIDER_BUDGET_WINDOW_MS;
  const idle = new IdleSessions(config.VERIFY_SMTP_SESSION_IDLE_MS, config.VERIFY_MAX_CONNECTIONS_PER_HOST);
  const events = politenessEvents(registry);
  return redis === undefined
    ? { backoff: new MemoryBackoffStore(policy), budgets: ProviderBudgets.memory(budgets, windowMs), idle, events }
    : {
        backoff: new RedisBackoffStore(redis, config.REDIS_PREFIX, policy),
        budgets: ProviderBudgets.redis(budgets, windowMs, redis, config.REDIS_PREFIX),
        idle,
        events,
      };
}
