/**
 * What one probe of a mail-server group (mail-server-probe.ts) knows as it goes: the recipients
 * still unanswered, what the servers said, each server's share of the RCPT budget and of the
 * sessions, the servers given up, and what the unanswered will be told when no session is left.
 */
import type { MailHost } from '../dns/resolver.ts';
import { providerOf } from '../checks/provider.ts';
import type { SmtpSessionResult } from '../smtp/session.ts';
import {
  DEFAULT_TUNING,
  MAX_SESSIONS_PER_SERVER,
  RCPT_BUDGET_FACTOR,
  type MailServerProbeDeps,
  type ProbeContext,
  type ProbeOutcome,
  type ProbeTuning,
} from './probe-types.ts';

/** What a session that answered nothing says of its server. */
export function failureOutcome(result: SmtpSessionResult, server: string): ProbeOutcome {
  const failure = result.failure;
  if (failure?.reply !== undefined) return { kind: 'session', stage: failure.stage, reply: failure.reply, server };
  if (failure?.kind === 'timeout' || failure?.kind === 'aborted') return { kind: 'timeout' };
  return { kind: 'no_connect' };
}

export class ProbeState {
  readonly tuning: ProbeTuning;
  /** Recipients not answered yet. */
  pending: string[];
  readonly outcomes = new Map<string, ProbeOutcome>();
  /** What the unanswered are told if no session answers them: the last failure seen. */
  lastFailure: ProbeOutcome = { kind: 'no_connect' };
  /** The gate allowed no more sessions to this provider within the deadline: the rest is `throttled`. */
  stopped: ProbeOutcome | undefined;
  /** Server addresses that failed for good in this batch (refused, timed out, permanent refusal). */
  readonly givenUp = new Set<string>();
  /** `checks.provider` of the MX hosts: egresses are set aside per provider, else per host. */
  readonly provider: string | null;
  /** For an unknown provider, the domain's MX set is what a back-off and a budget hold for. */
  readonly politeKey: string;
  /** RCPTs each server may answer: RCPT_BUDGET_FACTOR times what the group needs. */
  private readonly budget: number;
  private readonly answered = new Map<string, number>();
  /** Recipients a session that ran (or tried to connect) carried: the server may have been asked. */
  private readonly carried = new Set<string>();
  private readonly sessions = new Map<string, number>();

  constructor(
    hosts: MailHost[],
    recipients: string[],
    readonly deps: MailServerProbeDeps,
    readonly context: ProbeContext,
  ) {
    this.tuning = { ...DEFAULT_TUNING, ...deps.tuning };
    this.pending = [...recipients];
    this.budget = Math.floor(RCPT_BUDGET_FACTOR * recipients.length);
    this.provider = providerOf(hosts.map((host) => host.name));
    this.politeKey = this.provider ?? hosts.map((host) => host.name).join(' ');
  }

  /** Nothing more to ask, or no more asking: all answered, the deadline, or the gate. */
  get over(): boolean {
    return this.pending.length === 0 || this.context.signal.aborted || this.stopped !== undefined;
  }

  /** RCPTs the server at `address` may still answer; 0 once it had its sessions. */
  rcptsLeft(address: string): number {
    if ((this.sessions.get(address) ?? 0) >= MAX_SESSIONS_PER_SERVER) return 0;
    return this.budget - (this.answered.get(address) ?? 0);
  }

  sessionStarted(address: string): void {
    this.sessions.set(address, (this.sessions.get(address) ?? 0) + 1);
  }

  /** A session ran (or tried to connect) with these recipients: they are no longer unasked. */
  carriedBy(recipients: readonly string[]): void {
    for (const recipient of recipients) this.carried.add(recipient);
  }

  /** A session's answers; true when it answered anything. */
  record(address: string, result: SmtpSessionResult): boolean {
    this.answered.set(address, (this.answered.get(address) ?? 0) + result.rcptReplies);
    for (const { address: recipient, reply } of result.rcpt) this.outcomes.set(recipient, { kind: 'rcpt', reply, server: address });
    for (const recipient of result.skippedNeedsSmtpUtf8) this.outcomes.set(recipient, { kind: 'needs_smtputf8' });
    this.pending = this.pending.filter((recipient) => !this.outcomes.has(recipient));
    return result.rcpt.length > 0 || result.skippedNeedsSmtpUtf8.length > 0;
  }

  /**
   * A session that answered some and ended early (a cut, a stop) leaves the rest to the next
   * session; if none may follow, they keep what the server said when it cut (421: come back
   * later), or the time that ran out.
   */
  noteEarlyEnd(address: string, result: SmtpSessionResult): void {
    if (result.failure?.reply !== undefined) this.lastFailure = failureOutcome(result, address);
    else if ((result.failure !== undefined || result.rcptStop !== undefined) && this.lastFailure.kind !== 'session')
      this.lastFailure = { kind: 'timeout' };
  }

  /**
   * Every recipient's outcome: the unanswered get the gate's refusal, `timeout` at the deadline
   * (`unasked` when no session ever carried them: they waited for a slot until the deadline), or
   * the last failure.
   */
  finish(): Map<string, ProbeOutcome> {
    const aborted = this.context.signal.aborted;
    const timedOut = this.stopped === undefined && aborted && this.lastFailure.kind !== 'session';
    const rest: ProbeOutcome = this.stopped ?? (timedOut ? { kind: 'timeout' } : this.lastFailure);
    for (const recipient of this.pending)
      this.outcomes.set(recipient, timedOut && !this.carried.has(recipient) ? { kind: 'timeout', unasked: true } : rest);
    return this.outcomes;
  }
}
