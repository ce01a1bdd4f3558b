/**
 * Budgets per provider and egress, deployment-wide (decisions, "Politeness at volume"): sessions
 * per minute, recipients per session and recipients per minute, from `VERIFY_PROVIDER_BUDGETS`
 * (JSON keyed by provider, `*` for the rest) merged over `DEFAULT_BUDGETS`. Counted by
 * `rate-limiter-flexible` (a well-kept library of fixed windows, atomic in Redis) in Redis for
 * every worker, or in memory in embedded mode; keys `<prefix>:budget:{<provider>}:<egress>:…`,
 * hash-tagged like the back-off.
 *
 * Lists leave a fifth of each window's sessions and recipients to the batch route, so that a list
 * never starves batches; a batch may use all of it.
 *
 * Defaults (docs/verification.md, "Choosing budgets"): the large mailbox providers publish no
 * numbers for verification traffic, only that an unusual rate from one address is throttled;
 * what is known from senders' experience is that a few sessions a minute with tens of recipients
 * each stays below every provider's first threshold. Gmail and Microsoft 365 take more per
 * session than Yahoo, Apple, GMX, Yandex and Mail.ru, which throttle by connection rate early.
 * Mail gateways (Proofpoint, Mimecast, Barracuda) guard many customers behind one name. Other
 * servers keep the old limits: one session per address and RFC 5321's 100 recipients.
 */
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { z } from 'zod';
import type { Redis } from '@svc/jobs/redis';
import type { BudgetGrant, GateTarget, SessionBudgets, WorkPriority } from './session-gate.ts';

export interface ProviderBudget {
  sessionsPerMinute: number;
  recipientsPerSession: number;
  recipientsPerMinute: number;
}

const LARGE = { sessionsPerMinute: 5, recipientsPerSession: 20, recipientsPerMinute: 100 };
const STRICT = { sessionsPerMinute: 3, recipientsPerSession: 10, recipientsPerMinute: 50 };

export const DEFAULT_BUDGETS: Readonly<Record<string, ProviderBudget>> = {
  google: LARGE,
  microsoft: LARGE,
  yahoo: STRICT,
  apple: STRICT,
  gmx: STRICT,
  yandex: STRICT,
  mailru: STRICT,
  proofpoint: LARGE,
  mimecast: LARGE,
  barracuda: LARGE,
  '*': { sessionsPerMinute: 60, recipientsPerSession: 100, recipientsPerMinute: 1_000 },
};

const count = z.number().int().min(1).max(1_000_000);
const budgetsSchema = z.record(
  z.string().min(1).max(64),
  z.object({ sessionsPerMinute: count, recipientsPerSession: count, recipientsPerMinute: count }).partial().strict(),
);

/** `VERIFY_PROVIDER_BUDGETS` over the defaults; a provider's row may name only what it changes. */
export function parseBudgets(json: string | undefined): Record<string, ProviderBudget> {
  const budgets: Record<string, ProviderBudget> = { ...DEFAULT_BUDGETS };
  if (json === undefined || json.trim() === '') return budgets;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error('VERIFY_PROVIDER_BUDGETS: not JSON (expected {"google":{"sessionsPerMinute":5},"*":{...}})');
  }
  const parsed = budgetsSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `VERIFY_PROVIDER_BUDGETS: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  for (const [provider, row] of Object.entries(parsed.data)) {
    const base = budgets[provider] ?? budgets['*'] ?? DEFAULT_BUDGETS['*']!;
    budgets[provider] = { ...base, ...Object.fromEntries(Object.entries(row).filter(([, value]) => value !== undefined)) };
  }
  return budgets;
}

/** What lists may use of a window's budget: four fifths, at least one. */
export const listShare = (points: number): number => Math.max(1, Math.floor(points * 0.8));

type Make = (name: string, points: number) => RateLimiterAbstract;

export class ProviderBudgets implements SessionBudgets {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(
    private readonly budgets: Record<string, ProviderBudget>,
    private readonly windowMs: number,
    private readonly make: Make,
  ) {}

  static memory(budgets: Record<string, ProviderBudget>, windowMs: number): ProviderBudgets {
    return new ProviderBudgets(budgets, windowMs, (_name, points) => new RateLimiterMemory({ points, duration: windowMs / 1_000 }));
  }

  static redis(budgets: Record<string, ProviderBudget>, windowMs: number, redis: Redis, prefix: string): ProviderBudgets {
    return new ProviderBudgets(
      budgets,
      windowMs,
      (name, points) =>
        new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:budget:${name}`, points, duration: windowMs / 1_000 }),
    );
  }

  budgetOf(provider: string | null): ProviderBudget {
    return this.budgets[provider ?? '*'] ?? this.budgets['*'] ?? DEFAULT_BUDGETS['*']!;
  }

  /** One limiter per provider row and count (the `*` row's limiters serve every unknown provider, keyed by MX set). */
  private limiter(row: string, what: 'sessions' | 'recipients', points: number): RateLimiterAbstract {
    const name = `${row}:${what}`;
    let limiter = this.limiters.get(name);
    if (limiter === undefined) {
      limiter = this.make(what, points);
      this.limiters.set(name, limiter);
    }
    return limiter;
  }

  private limitersOf(provider: string | null) {
    const row = provider !== null && provider in this.budgets ? provider : '*';
    const budget = this.budgetOf(provider);
    return {
      budget,
      sessions: this.limiter(row, 'sessions', budget.sessionsPerMinute),
      recipients: this.limiter(row, 'recipients', budget.recipientsPerMinute),
    };
  }

  /** Budgets are per provider (or MX set) and egress; the provider's name is the hash tag. */
  private id = (target: GateTarget): string => `{${target.key}}:${target.egress}`;

  /** `newSession` false: a parked session carries the recipients, and no session is counted. */
  async take(target: GateTarget, wanted: number, priority: WorkPriority, newSession = true): Promise<BudgetGrant | { retryInMs: number }> {
    const { budget, sessions, recipients } = this.limitersOf(target.provider);
    const cap = (points: number) => (priority === 'list' ? listShare(points) : points);
    const id = this.id(target);
    const [usedSessions, usedRecipients] = await Promise.all([sessions.get(id), recipients.get(id)]);
    const wait = (res: RateLimiterRes | null) => ({ retryInMs: Math.max(50, res?.msBeforeNext ?? this.windowMs) });
    if (newSession && (usedSessions?.consumedPoints ?? 0) >= cap(budget.sessionsPerMinute)) return wait(usedSessions);
    const left = cap(budget.recipientsPerMinute) - (usedRecipients?.consumedPoints ?? 0);
    if (left <= 0) return wait(usedRecipients);
    const granted = Math.max(1, Math.min(wanted, budget.recipientsPerSession, left));
    // Another worker may have taken the same points meanwhile: a refused take gives its points back.
    try {
      if (newSession) await sessions.consume(id, 1);
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      await sessions.reward(id, 1);
      return wait(error);
    }
    try {
      await recipients.consume(id, granted);
    } catch (error) {
      if (newSession) await sessions.reward(id, 1);
      if (!(error instanceof RateLimiterRes)) throw error;
      await recipients.reward(id, granted);
      return wait(error);
    }
    return { recipients: granted };
  }

  async adjustSessions(target: GateTarget, delta: 1 | -1): Promise<void> {
    const { sessions } = this.limitersOf(target.provider);
    const id = this.id(target);
    if (delta > 0) {
      await sessions.penalty(id, 1);
      return;
    }
    const used = await sessions.get(id);
    if (used !== null && used.consumedPoints > 0) await sessions.reward(id, 1);
  }

  async giveBack(target: GateTarget, count: number): Promise<void> {
    const { recipients } = this.limitersOf(target.provider);
    const used = await recipients.get(this.id(target));
    if (used !== null && used.consumedPoints > 0) await recipients.reward(this.id(target), Math.min(count, used.consumedPoints));
  }
}
