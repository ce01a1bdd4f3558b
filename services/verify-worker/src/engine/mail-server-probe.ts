/**
 * Probes one mail-server group (domains that share an MX set): sessions carrying many RCPTs,
 * failover to the next address and MX host by preference when a host refuses, times out or turns
 * the prober away before any RCPT, and new sessions for what a server left unanswered.
 *
 * Politeness, measured: one session where the server allows it; a server that guards against
 * address harvesting (a 421 or a hang-up after some refusals, replies slowed after each refusal,
 * a recipient limit) teaches this batch its limit, and the remaining addresses go in new
 * sessions that stay under it (one RCPT at a time, ending before the limit). Each server answers
 * at most 1.3 times the RCPTs the group needs, in at most a few sessions; what neither the budget
 * nor the deadline allows keeps the last thing the server said, or `timeout`.
 *
 * A temporary refusal of the connection (4xx at the greeting, EHLO or MAIL FROM, or a 421 in
 * place of the first RCPT reply) is retried within the batch deadline, after the delay the
 * reply asks for or a short backoff, once the other hosts were tried. Never connects to a
 * non-public address unless allowed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BeforeSession } from '@svc/contracts';
import { classifySessionReply, isTransient, readRcptReply, retryAfterSeconds } from '../checks/index.ts';
import { providerOf } from '../checks/provider.ts';
import { refusesTheClient } from '../checks/refused-client.ts';
import type { MailHost } from '../dns/resolver.ts';
import { runSmtpSession, type SmtpReply, type SmtpSessionResult, type SmtpStage } from '../smtp/session.ts';
import type { GateTarget, SessionGate, WorkPriority } from '../politeness/session-gate.ts';
import { idleKey, type IdleSessions } from '../smtp/idle-sessions.ts';
import type { Egress, EgressPool } from './egress-pool.ts';
import type { SessionLimiter } from './host-limiter.ts';
import { takeSessionSlot } from './session-slot.ts';

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
  | { kind: 'timeout' }
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
}

function failureOutcome(result: SmtpSessionResult, server: string): ProbeOutcome {
  const failure = result.failure;
  if (failure?.reply !== undefined) return { kind: 'session', stage: failure.stage, reply: failure.reply, server };
  if (failure?.kind === 'timeout' || failure?.kind === 'aborted') return { kind: 'timeout' };
  return { kind: 'no_connect' };
}

const isTemporary = (outcome: ProbeOutcome) => outcome.kind === 'session' && isTransient(outcome.reply);

/**
 * The server refused the client by name (a blocklist, the client's address), at the session or
 * at every RCPT alike: it says nothing of the mailboxes and everything of the egress used.
 */
function refusedTheEgress(result: SmtpSessionResult): boolean {
  const turnedAway = result.failure?.reply;
  if (turnedAway !== undefined && result.rcpt.length === 0)
    return classifySessionReply(turnedAway) === 'blocked' && refusesTheClient(turnedAway);
  return result.rcpt.length > 0 && result.rcpt.every(({ reply }) => readRcptReply(reply).class === 'blocked' && refusesTheClient(reply));
}

/** What a session taught about its server's limits. */
function learn(limits: ServerLimits, result: SmtpSessionResult): void {
  const lower = (current: number | undefined, found: number) => Math.min(current ?? found, found);
  if (result.rcptStop === 'too_many_recipients' && result.rcpt.length > 0)
    limits.maxRecipients = lower(limits.maxRecipients, result.rcpt.length);
  if (result.cutAfterRefusals !== undefined) {
    if (result.cutAfterRefusals > 0) limits.rejectionCap = lower(limits.rejectionCap, result.cutAfterRefusals);
    else limits.maxRecipients = lower(limits.maxRecipients, result.rcpt.length);
  }
  if (result.slowedAfterRefusals !== undefined) limits.rejectionCap = lower(limits.rejectionCap, Math.max(1, result.slowedAfterRefusals));
}

export async function probeMailServers(
  hosts: MailHost[],
  recipients: string[],
  deps: MailServerProbeDeps,
  context: ProbeContext,
): Promise<Map<string, ProbeOutcome>> {
  const tuning = { ...DEFAULT_TUNING, ...deps.tuning };
  const { signal } = context;
  const outcomes = new Map<string, ProbeOutcome>();
  const targets = hosts.map((host) => ({ name: host.name, addresses: deps.filterTargets(host.addresses) }));
  if (targets.every((target) => target.addresses.length === 0)) {
    for (const recipient of recipients) outcomes.set(recipient, { kind: 'no_target' });
    return outcomes;
  }

  // Egresses are set aside per provider (one provider's servers share one blocklist policy), else per host.
  const provider = providerOf(hosts.map((host) => host.name));
  let pending = [...recipients];
  let lastFailure: ProbeOutcome = { kind: 'no_connect' };
  const budget = Math.floor(RCPT_BUDGET_FACTOR * recipients.length);
  const answered = new Map<string, number>();
  const sessions = new Map<string, number>();
  /** Addresses that failed for good in this batch (refused, timed out, permanent refusal). */
  const givenUp = new Set<string>();
  /** The gate allowed no more sessions to this provider within the deadline: the rest is `throttled`. */
  let stopped: ProbeOutcome | undefined;
  // For an unknown provider, the domain's MX set is what a back-off and a budget hold for.
  const politeKey = provider ?? hosts.map((host) => host.name).join(' ');

  /** Sessions on one address while each makes progress. Returns the failure that stopped them, if any. */
  const sessionsOn = async (address: string, name: string): Promise<ProbeOutcome | undefined> => {
    const limits = context.limits.get(address) ?? {};
    context.limits.set(address, limits);
    while (pending.length > 0 && !signal.aborted && stopped === undefined) {
      const left = budget - (answered.get(address) ?? 0);
      if (left <= 0 || (sessions.get(address) ?? 0) >= MAX_SESSIONS_PER_SERVER) return undefined;
      const key = provider ?? name;
      const egress = deps.egress?.pool.pick(key);
      const socksProxy = egress === undefined ? deps.session.socksProxy : egress.proxy;
      const wanted = Math.min(left, limits.maxRecipients ?? MAX_RCPT_PER_SESSION, pending.length);
      const target: GateTarget = { key: politeKey, provider, egress: egress?.label ?? 'direct' };
      const politeness = deps.politeness;
      // A parked session to this server carries the next recipients without a new connection.
      const idleAt = idleKey({ ...deps.session, host: address, socksProxy });
      const parked = deps.session.idle?.has(idleAt) === true;
      const entry = await politeness?.gate
        .enter(target, wanted, politeness.priority, signal, context.deadlineAt, tuning.minRetryTimeLeftMs, !parked)
        .catch((error: unknown) => {
          if (signal.aborted) return undefined;
          throw error;
        });
      if (politeness !== undefined && entry === undefined) return undefined; // the deadline came while waiting
      if (entry?.open === false) {
        stopped = { kind: 'throttled', until: entry.until };
        return undefined;
      }
      const allowed = entry?.recipients ?? wanted;
      const chunk = pending.slice(0, Math.min(MAX_RCPT_PER_SESSION, allowed));
      sessions.set(address, (sessions.get(address) ?? 0) + 1);
      let result: SmtpSessionResult | undefined;
      try {
        const { socksProxy: _configured, ...session } = deps.session;
        const { slot, resume } = await takeSessionSlot(deps.limiter, deps.session.idle, idleAt, address, signal);
        try {
          await context.beforeSession?.();
        } catch (error) {
          if (resume === undefined) slot.release();
          else deps.session.idle?.end(resume);
          throw error;
        }
        deps.trackOpen?.(1);
        if (egress !== undefined && resume === undefined) deps.egress?.onSession?.(egress, provider);
        result = await runSmtpSession({
          ...session,
          ...(socksProxy === undefined ? {} : { socksProxy }),
          ...(resume === undefined ? {} : { resume }),
          slot,
          host: address,
          servername: name,
          recipients: chunk,
          maxRecipients: Math.min(left, allowed, limits.maxRecipients ?? MAX_RCPT_PER_SESSION),
          rejectionCap: limits.rejectionCap,
          slowReplyMs: tuning.slowReplyMs,
          signal,
          onReply: deps.onReply,
          onClosed: () => deps.trackOpen?.(-1),
        }).catch((error: unknown) => {
          // Unsafe input, refused before any connection: nothing holds the slot.
          deps.trackOpen?.(-1);
          if (resume === undefined) slot.release();
          else deps.session.idle?.end(resume);
          throw error instanceof Error ? error : new Error(String(error));
        });
      } catch (error) {
        if (entry?.open === true) await politeness?.gate.leave(target, entry, { spoke: false, rcptReplies: [], answered: 0 });
        if (signal.aborted) return undefined; // waited for a slot until the deadline
        throw error;
      } finally {
        deps.observeSession?.(result);
      }
      if (entry?.open === true)
        await politeness?.gate
          .leave(target, entry, {
            failureReply: result.failure?.reply,
            spoke: result.failure?.reply !== undefined || result.rcpt.length > 0 || result.failure === undefined,
            rcptReplies: result.rcpt.map(({ reply }) => reply),
            answered: result.rcptReplies,
          })
          .catch(() => undefined);
      if (egress !== undefined && deps.egress !== undefined && refusedTheEgress(result)) {
        const setAside = deps.egress.pool.setAside(egress, key);
        deps.egress.onBlock?.(egress, provider, setAside);
        // Another egress has another address: the same recipients go through it, while the deadline allows.
        if (setAside && deps.egress.pool.hasAlternative(egress, key) && context.deadlineAt - Date.now() > tuning.minRetryTimeLeftMs)
          continue;
      }
      answered.set(address, (answered.get(address) ?? 0) + result.rcptReplies);
      for (const { address: recipient, reply } of result.rcpt) outcomes.set(recipient, { kind: 'rcpt', reply, server: address });
      for (const recipient of result.skippedNeedsSmtpUtf8) outcomes.set(recipient, { kind: 'needs_smtputf8' });
      const progressed = result.rcpt.length > 0 || result.skippedNeedsSmtpUtf8.length > 0;
      pending = pending.filter((recipient) => !outcomes.has(recipient));
      learn(limits, result);
      if (!progressed) return failureOutcome(result, address);
      // A cut or a stop leaves the rest to the next session; if none may follow, they keep what the
      // server said when it cut (421: come back later), or the time that ran out.
      if (result.failure?.reply !== undefined) lastFailure = failureOutcome(result, address);
      else if ((result.failure !== undefined || result.rcptStop !== undefined) && lastFailure.kind !== 'session')
        lastFailure = { kind: 'timeout' };
    }
    return undefined;
  };

  for (let round = 0; pending.length > 0 && !signal.aborted && stopped === undefined; round++) {
    let temporary: ProbeOutcome | undefined;
    for (const target of targets) {
      for (const address of target.addresses) {
        if (givenUp.has(address) || pending.length === 0 || signal.aborted || stopped !== undefined) continue;
        const failure = await sessionsOn(address, target.name);
        if (failure === undefined) continue;
        lastFailure = failure;
        if (isTemporary(failure)) temporary = failure;
        else givenUp.add(address);
      }
    }
    if (pending.length === 0 || temporary === undefined || signal.aborted || stopped !== undefined) break;
    const delayMs = retryDelay(temporary, round, tuning);
    if (delayMs === undefined || context.deadlineAt - Date.now() - delayMs < tuning.minRetryTimeLeftMs) break;
    const waited = await sleep(delayMs, true, { signal }).catch(() => false);
    if (!waited) break;
  }

  const rest: ProbeOutcome = stopped ?? (signal.aborted && lastFailure.kind !== 'session' ? { kind: 'timeout' } : lastFailure);
  for (const recipient of pending) outcomes.set(recipient, rest);
  return outcomes;
}

/** The delay a temporary refusal asks for, or the next backoff step; undefined when no round is left. */
function retryDelay(outcome: ProbeOutcome, round: number, tuning: ProbeTuning): number | undefined {
  const asked = outcome.kind === 'session' ? retryAfterSeconds(outcome.reply.text) : undefined;
  if (asked !== undefined) return round === 0 ? asked * 1_000 : undefined;
  return tuning.retryDelaysMs[round];
}
