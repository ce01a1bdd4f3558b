/**
 * The mail-server prober's types and constants (mail-server-probe.ts), apart so that the parts
 * of a probe (probe-state.ts, probe-session.ts) share them without importing the prober itself.
 */
import type { BeforeSession } from '@svc/contracts';
import type { IdleSessions } from '../smtp/idle-sessions.ts';
import type { SmtpReply, SmtpSessionResult, SmtpStage } from '../smtp/session.ts';
import type { SessionGate, WorkPriority } from '../politeness/session-gate.ts';
import type { Egress, EgressPool } from './egress-pool.ts';
import type { SessionLimiter } from './host-limiter.ts';

/** RFC 5321 §4.5.3.1.8: a server must accept at least 100 recipients per transaction. */
export const MAX_RCPT_PER_SESSION = 100;
/** A server answers at most this many times the RCPTs the group needs (its addresses and controls). */
export const RCPT_BUDGET_FACTOR = 1.3;
/** Sessions one server gets for one group within a batch. */
export const MAX_SESSIONS_PER_SERVER = 8;

export type ProbeOutcome =
  | { kind: 'rcpt'; reply: SmtpReply; server: string }
  /** The server turned the session away before answering this RCPT (554 greeting, 5.7.1 at MAIL FROM, 421 guard...). */
  | { kind: 'session'; stage: SmtpStage; reply: SmtpReply; server: string }
  | { kind: 'no_connect' }
  /** Every address of the mail hosts was refused by the private-address guard: nothing was tried. */
  | { kind: 'no_target' }
  /**
   * No answer within the deadline. `unasked`: no session ever carried this recipient (the
   * deadline came while it waited for a slot or the gate): the server was never asked.
   */
  | { kind: 'timeout'; unasked?: true }
  | { kind: 'needs_smtputf8' }
  /** The provider's back-off or budget allowed no session before `until` (within the deadline): not asked. */
  | { kind: 'throttled'; until: number };

export interface ProbeTuning {
  /** Waits before each new round on servers that refused temporarily, when the reply names no delay. */
  retryDelaysMs: number[];
  /** A retry round starts only when at least this much of the deadline is left after the wait. */
  minRetryTimeLeftMs: number;
  /** See SmtpSessionRequest.slowReplyMs. */
  slowReplyMs: number;
}

export const DEFAULT_TUNING: ProbeTuning = { retryDelaysMs: [1_000, 3_000, 8_000], minRetryTimeLeftMs: 3_000, slowReplyMs: 750 };

/** What a batch learnt about one server (by address): shared by the groups of the batch. */
export interface ServerLimits {
  /** End sessions after this many refused RCPTs (a harvest guard cuts or slows down after them). */
  rejectionCap?: number;
  /** At most this many RCPTs per session. */
  maxRecipients?: number;
}

export interface MailServerProbeDeps {
  filterTargets: (addresses: string[]) => string[];
  limiter: SessionLimiter;
  session: {
    port: number;
    heloName: string;
    mailFrom: string;
    connectTimeoutMs: number;
    commandTimeoutMs: number;
    socksProxy?: string;
    /** Idle sessions kept for the next batch to the same server (VERIFY_SMTP_SESSION_IDLE_MS). */
    idle?: IdleSessions;
  };
  tuning?: Partial<ProbeTuning>;
  /**
   * The ways out (egress-pool.ts); without it every session goes through `session.socksProxy`.
   * `provider` is the MX hosts' provider, or null (the metrics' label).
   */
  egress?: {
    pool: EgressPool;
    onSession?: (egress: Egress, provider: string | null) => void;
    /** A mail server refused this egress by name: `setAside` says whether it was set aside for the provider (or host). */
    onBlock?: (egress: Egress, provider: string | null, setAside: boolean) => void;
  };
  observeSession?: (result: SmtpSessionResult | undefined) => void;
  /** +1 when a session opens, -1 when it ends (the open-sessions gauge). */
  trackOpen?: (delta: 1 | -1) => void;
  onReply?: (code: number) => void;
  /** Politeness at volume (politeness/): every new session passes the provider's back-off and budgets. */
  politeness?: { gate: SessionGate; priority: WorkPriority };
}

export interface ProbeContext {
  signal: AbortSignal;
  deadlineAt: number;
  /** Limits learnt per server address during this batch. */
  limits: Map<string, ServerLimits>;
  /** The caller's say, once a slot is granted, before each session opens (a list that ended opens none). */
  beforeSession?: BeforeSession | undefined;
  /** Every session on a new connection: no parked one is taken (a list's retry round). */
  freshConnection?: boolean | undefined;
}
