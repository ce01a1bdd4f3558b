/**
 * The gate every new SMTP session to a provider passes through (decisions, "Politeness at
 * volume"): first the provider's back-off for the egress (provider-backoff.ts), then its budgets
 * (provider-budgets.ts). A caller waits at the gate only while its deadline allows a session
 * after the wait; otherwise it is told when to come back, and its addresses are `throttled`.
 * After the session, the gate reads what it said: a throttle reply starts or doubles the
 * back-off, a session that ended without one resets it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { retryAfterSeconds, type SmtpReply } from '../checks/index.ts';
import { throttlesProvider } from '../checks/throttle-replies.ts';
import type { BackoffState, BackoffStore } from './provider-backoff.ts';

/** Who asks: the synchronous batch route, or a list (which leaves part of each budget to batches). */
export type WorkPriority = 'batch' | 'list';

export interface BudgetGrant {
  /** Recipients this session may carry (at least 1). */
  recipients: number;
}

/** Budgets per provider and egress (provider-budgets.ts); absent, only the back-off applies. */
export interface SessionBudgets {
  /** One session and up to `wanted` recipients, or how long until the budget allows one. */
  take(target: GateTarget, wanted: number, priority: WorkPriority, newSession: boolean): Promise<BudgetGrant | { retryInMs: number }>;
  /** Recipients granted but not sent go back to the window's budget. */
  giveBack(target: GateTarget, recipients: number): Promise<void>;
  /**
   * Corrects the window's session count once it is known whether a connection was opened: -1
   * for a session counted as new that a parked connection carried, +1 for one counted as carried
   * that had to open a connection (its parked connection went to another session meanwhile).
   */
  adjustSessions(target: GateTarget, delta: 1 | -1): Promise<void>;
}

export interface GateTarget {
  /** The provider's name, or for an unknown provider the MX set (the back-off's and budgets' key). */
  key: string;
  /** `checks.provider`, null when unknown (picks the `*` budget). */
  provider: string | null;
  /** The egress's label. */
  egress: string;
}

export type GateEntry =
  | { open: true; recipients: number; startedAt: number; probe: boolean; newSession: boolean }
  /** No session before `until` (a back-off or an exhausted budget); `backoff`: a throttle's back-off. */
  | { open: false; until: number; backoff: boolean };

export interface SessionOutcome {
  /** A reply that ended the session, if any. */
  failureReply?: SmtpReply | undefined;
  /** The session reached the server and spoke SMTP (an unreached server tells nothing of the back-off). */
  spoke: boolean;
  rcptReplies: SmtpReply[];
  /** RCPT commands answered. */
  answered: number;
}

export interface GateEvents {
  onThrottle?: (target: GateTarget, state: BackoffState) => void;
  onRefused?: (target: GateTarget, why: 'backoff' | 'budget') => void;
  onSession?: (target: GateTarget, recipients: number) => void;
}

/** How often a session waiting for another's probe asks again. */
const PROBE_POLL_MS = 200;

export class SessionGate {
  constructor(
    private readonly backoff: BackoffStore,
    private readonly budgets: SessionBudgets | undefined,
    private readonly events: GateEvents = {},
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Waits for a session to `target` carrying up to `wanted` recipients, while at least
   * `minSessionMs` of the deadline would be left after the wait.
   */
  async enter(
    target: GateTarget,
    wanted: number,
    priority: WorkPriority,
    signal: AbortSignal,
    deadlineAt: number,
    minSessionMs: number,
    /** False when a parked session will carry it (idle-sessions.ts): no new session is counted. */
    newSession = true,
  ): Promise<GateEntry> {
    const latest = () => deadlineAt - minSessionMs;
    for (;;) {
      signal.throwIfAborted();
      const admission = await this.backoff.admit(target.key, target.egress, this.now());
      if (!admission.admitted) {
        // After the back-off, one session probes; the others wait for its end, not its lease's.
        const probing = await this.probing(target);
        if (probing ? this.now() > latest() : admission.until > latest()) {
          this.events.onRefused?.(target, 'backoff');
          return { open: false, until: probing ? this.now() + PROBE_POLL_MS : admission.until, backoff: true };
        }
        await sleep(probing ? PROBE_POLL_MS : Math.max(1, admission.until - this.now()), undefined, { signal });
        continue;
      }
      const grant = this.budgets === undefined ? { recipients: wanted } : await this.budgets.take(target, wanted, priority, newSession);
      if ('recipients' in grant) {
        this.events.onSession?.(target, grant.recipients);
        return { open: true, recipients: grant.recipients, startedAt: this.now(), probe: admission.probe, newSession };
      }
      const until = this.now() + grant.retryInMs;
      if (until > latest()) {
        this.events.onRefused?.(target, 'budget');
        return { open: false, until, backoff: false };
      }
      await sleep(grant.retryInMs, undefined, { signal });
    }
  }

  /** Whether the back-off is over and only another session's probe is awaited. */
  private async probing(target: GateTarget): Promise<boolean> {
    const state = await this.backoff.peek(target.key, target.egress);
    return state !== undefined && state.until <= this.now();
  }

  /**
   * Whether the session opened a connection, once its slot says so (a session waiting for a slot
   * is often handed a connection parked meanwhile): the budget counts connections opened.
   */
  async opened(target: GateTarget, entry: Extract<GateEntry, { open: true }>, newConnection: boolean): Promise<void> {
    if (this.budgets === undefined || entry.newSession === newConnection) return;
    await this.budgets.adjustSessions(target, newConnection ? 1 : -1).catch(() => undefined);
  }

  /** What the session said: a throttle starts (or doubles) the back-off; a clean session ends it. */
  async leave(target: GateTarget, entry: Extract<GateEntry, { open: true }>, outcome: SessionOutcome): Promise<BackoffState | undefined> {
    const unused = entry.recipients - outcome.answered;
    if (unused > 0 && this.budgets !== undefined) await this.budgets.giveBack(target, unused).catch(() => undefined);
    const throttle = [outcome.failureReply, ...outcome.rcptReplies].find((reply) => reply !== undefined && throttlesProvider(reply));
    if (throttle !== undefined) {
      const asked = retryAfterSeconds(throttle.text);
      const state = await this.backoff.throttle(target.key, target.egress, this.now(), asked === undefined ? undefined : asked * 1_000);
      this.events.onThrottle?.(target, state);
      return state;
    }
    if (outcome.spoke) await this.backoff.clear(target.key, target.egress, entry.startedAt);
    return undefined;
  }
}
