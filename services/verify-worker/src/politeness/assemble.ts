/**
 * The politeness state of a deployment: in Redis when the worker has one (shared by every worker
 * and by the batch and list work of a process), else in this process. One state per owner (the
 * Redis client, else the metrics registry that the batch and list verifier of an embedded
 * process share), so that a process's batch and list work see the same back-offs and budgets.
 */
import type { Config } from '@svc/config';
import type { Redis } from '@svc/jobs/redis';
import { MemoryBackoffStore, RedisBackoffStore, type BackoffStore } from './provider-backoff.ts';
import { ProviderBudgets, parseBudgets } from './provider-budgets.ts';
import { IdleSessions } from '../smtp/idle-sessions.ts';
import type { SessionBudgets } from './session-gate.ts';

export interface PolitenessState {
  backoff: BackoffStore;
  budgets?: SessionBudgets;
  /** Idle SMTP sessions of this process, for the next batch to the same server. */
  idle: IdleSessions;
}

const byOwner = new WeakMap<object, PolitenessState>();

export function politenessState(config: Config, redis: Redis | undefined, owner: object | undefined): PolitenessState {
  const key = redis ?? owner;
  const known = key === undefined ? undefined : byOwner.get(key);
  if (known !== undefined) return known;
  const policy = { baseMs: config.VERIFY_THROTTLE_BACKOFF_MS };
  const budgets = parseBudgets(config.VERIFY_PROVIDER_BUDGETS);
  const windowMs = config.VERIFY_PROVIDER_BUDGET_WINDOW_MS;
  const state: PolitenessState =
    redis === undefined
      ? { backoff: new MemoryBackoffStore(policy), budgets: ProviderBudgets.memory(budgets, windowMs), idle: idleSessions(config) }
      : {
          backoff: new RedisBackoffStore(redis, config.REDIS_PREFIX, policy),
          budgets: ProviderBudgets.redis(budgets, windowMs, redis, config.REDIS_PREFIX),
          idle: idleSessions(config),
        };
  if (key !== undefined) byOwner.set(key, state);
  return state;
}

const idleSessions = (config: Config): IdleSessions =>
  new IdleSessions(config.VERIFY_SMTP_SESSION_IDLE_MS, config.VERIFY_MAX_CONNECTIONS_PER_HOST);

/**
 * Shutdown: ends the parked SMTP connections of the state kept for `redis` (else `owner`) and
 * gives their session slots back (the caller then waits for the limiter's releases, e.g.
 * `RedisHostLimiter.close()`, before closing Redis): without it the slots a stopped worker's
 * parked connections held stay taken until their leases lapse (15 s).
 */
export async function closeIdleSessions(redis: Redis | undefined, owner?: object): Promise<void> {
  const key = redis ?? owner;
  const state = key === undefined ? undefined : byOwner.get(key);
  await state?.idle.close();
}
