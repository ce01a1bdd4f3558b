/**
 * Sessions on one mail-server address within a probe (mail-server-probe.ts), one after another
 * while each makes progress. Each session, in order: planned (its egress, how many RCPTs the
 * budget leaves), let through the provider's gate (politeness/session-gate.ts: back-off and
 * budgets), given a slot and maybe a parked connection (session-slot.ts), run, reported back to
 * the gate, and recorded. A session refused by name moves to another egress when one is left.
 */
import { classifySessionReply, readRcptReply } from '../checks/index.ts';
import { refusesTheClient } from '../checks/refused-client.ts';
import type { GateEntry, GateTarget } from '../politeness/session-gate.ts';
import { idleKey, type ParkedSession } from '../smtp/idle-sessions.ts';
import { runSmtpSession, type SmtpSessionRequest, type SmtpSessionResult } from '../smtp/session.ts';
import type { Egress } from './egress-pool.ts';
import type { HeldSlot } from './host-limiter.ts';
import { failureOutcome, type ProbeState } from './probe-state.ts';
import { MAX_RCPT_PER_SESSION, type ProbeOutcome, type ServerLimits } from './probe-types.ts';
import { takeSessionSlot } from './session-slot.ts';

/** What one session is to be: where it goes out and how much it may ask. */
interface SessionPlan {
  address: string;
  /** The MX host name (TLS SNI). */
  name: string;
  /** RCPTs this server may still answer in this probe. */
  left: number;
  /** RCPTs this session would carry, before the gate's budget. */
  wanted: number;
  egress: Egress | undefined;
  /** What egresses are set aside for: the provider, else the host. */
  egressKey: string;
  socksProxy: string | undefined;
  target: GateTarget;
  /** The parked connections this session may take (idle-sessions.ts). */
  idleAt: string;
}

/** After a session: another one, none (done), or the failure that stopped them. */
type Step = 'again' | 'done' | ProbeOutcome;

/** Sessions on one address while each makes progress. Returns the failure that stopped them, if any. */
export async function sessionsOn(state: ProbeState, address: string, name: string): Promise<ProbeOutcome | undefined> {
  const limits = state.context.limits.get(address) ?? {};
  state.context.limits.set(address, limits);
  while (!state.over) {
    const step = await oneSession(state, address, name, limits);
    if (step === 'done') return undefined;
    if (step !== 'again') return step;
  }
  return undefined;
}

async function oneSession(state: ProbeState, address: string, name: string, limits: ServerLimits): Promise<Step> {
  const plan = planSession(state, address, name, limits);
  if (plan === undefined) return 'done';
  const entry = await passGate(state, plan);
  if (entry === 'deadline') return 'done'; // the deadline came while waiting
  if (entry?.open === false) {
    state.stopped = { kind: 'throttled', until: entry.until };
    return 'done';
  }
  const allowed = entry?.recipients ?? plan.wanted;
  const recipients = state.pending.slice(0, Math.min(MAX_RCPT_PER_SESSION, allowed));
  state.sessionStarted(address);
  const result = await runSession(state, plan, entry, { recipients, allowed, limits });
  if (result === undefined) return 'done'; // waited for a slot until the deadline
  if (!cutBeforeAsking(result)) state.carriedBy(recipients);
  await leaveGate(state, plan, entry, result);
  if (retryElsewhere(state, plan, result)) return 'again';
  const progressed = state.record(address, result);
  learn(limits, result);
  if (!progressed) return failureOutcome(result, address);
  state.noteEarlyEnd(address, result);
  return 'again';
}

function planSession(state: ProbeState, address: string, name: string, limits: ServerLimits): SessionPlan | undefined {
  const left = state.rcptsLeft(address);
  if (left <= 0) return undefined;
  const { deps } = state;
  const egressKey = state.provider ?? name;
  const egress = deps.egress?.pool.pick(egressKey);
  const socksProxy = egress === undefined ? deps.session.socksProxy : egress.proxy;
  return {
    address,
    name,
    left,
    wanted: Math.min(left, limits.maxRecipients ?? MAX_RCPT_PER_SESSION, state.pending.length),
    egress,
    egressKey,
    socksProxy,
    target: { key: state.politeKey, provider: state.provider, egress: egress?.label ?? 'direct' },
    idleAt: idleKey({ ...deps.session, host: address, socksProxy }),
  };
}

/** The provider's gate; undefined without politeness, `deadline` when the deadline came while waiting. */
async function passGate(state: ProbeState, plan: SessionPlan): Promise<GateEntry | undefined | 'deadline'> {
  const politeness = state.deps.politeness;
  if (politeness === undefined) return undefined;
  const { signal, deadlineAt } = state.context;
  // A parked session to this server carries the next recipients without a new connection.
  const parked = state.context.freshConnection !== true && state.deps.session.idle?.has(plan.idleAt) === true;
  return politeness.gate
    .enter(plan.target, plan.wanted, politeness.priority, signal, deadlineAt, state.tuning.minRetryTimeLeftMs, !parked)
    .catch((error: unknown) => {
      if (signal.aborted) return 'deadline' as const;
      throw error;
    });
}

interface SessionAsk {
  recipients: string[];
  /** RCPTs the gate allowed. */
  allowed: number;
  /** The server's limits as learnt when the session starts (another session may teach them while this one waits). */
  limits: ServerLimits;
}

/** The session's result; undefined when the deadline came before it could start. */
async function runSession(
  state: ProbeState,
  plan: SessionPlan,
  entry: GateEntry | undefined,
  ask: SessionAsk,
): Promise<SmtpSessionResult | undefined> {
  let result: SmtpSessionResult | undefined;
  try {
    result = await openSession(state, plan, entry, ask);
  } catch (error) {
    if (entry?.open === true) await state.deps.politeness?.gate.leave(plan.target, entry, { spoke: false, rcptReplies: [], answered: 0 });
    if (state.context.signal.aborted) return undefined;
    throw error;
  } finally {
    state.deps.observeSession?.(result);
  }
  return result;
}

/** A slot (and maybe a parked connection), the caller's say, then the SMTP session in it. */
async function openSession(
  state: ProbeState,
  plan: SessionPlan,
  entry: GateEntry | undefined,
  ask: SessionAsk,
): Promise<SmtpSessionResult> {
  const { deps, context } = state;
  const { idle } = deps.session;
  const gate = entry?.open === true ? deps.politeness?.gate : undefined;
  const fresh = context.freshConnection === true;
  const { slot, resume } = await takeSessionSlot(deps.limiter, idle, plan.idleAt, plan.address, context.signal, fresh);
  if (entry?.open === true) await gate?.opened(plan.target, entry, resume === undefined);
  // Whatever stops the session before it runs: the slot goes back, with the parked connection's end.
  const giveBack = () => (resume === undefined ? slot.release() : idle?.end(resume));
  try {
    await context.beforeSession?.();
  } catch (error) {
    giveBack();
    throw error;
  }
  deps.trackOpen?.(1);
  if (plan.egress !== undefined && resume === undefined) deps.egress?.onSession?.(plan.egress, state.provider);
  const result = await runSmtpSession(sessionRequest(state, plan, ask, slot, resume)).catch((error: unknown) => {
    // Unsafe input, refused before any connection: nothing holds the slot.
    deps.trackOpen?.(-1);
    giveBack();
    throw error instanceof Error ? error : new Error(String(error));
  });
  // A parked connection that failed its RSET was replaced by a new one: a session counted after all.
  if (resume !== undefined && result.reused !== true) {
    if (plan.egress !== undefined) deps.egress?.onSession?.(plan.egress, state.provider);
    if (entry?.open === true) await gate?.opened(plan.target, { ...entry, newSession: false }, true);
  }
  return result;
}

function sessionRequest(
  state: ProbeState,
  plan: SessionPlan,
  ask: SessionAsk,
  slot: HeldSlot,
  resume: ParkedSession | undefined,
): SmtpSessionRequest {
  const { deps, context } = state;
  const { socksProxy: _configured, ...session } = deps.session;
  return {
    ...session,
    ...(plan.socksProxy === undefined ? {} : { socksProxy: plan.socksProxy }),
    ...(resume === undefined ? {} : { resume }),
    slot,
    host: plan.address,
    servername: plan.name,
    recipients: ask.recipients,
    maxRecipients: Math.min(plan.left, ask.allowed, ask.limits.maxRecipients ?? MAX_RCPT_PER_SESSION),
    rejectionCap: ask.limits.rejectionCap,
    slowReplyMs: state.tuning.slowReplyMs,
    signal: context.signal,
    onReply: deps.onReply,
    onClosed: () => deps.trackOpen?.(-1),
  };
}

/** What the session said goes back to the gate: a throttle starts the back-off, a clean session ends it. */
async function leaveGate(state: ProbeState, plan: SessionPlan, entry: GateEntry | undefined, result: SmtpSessionResult): Promise<void> {
  if (entry?.open !== true) return;
  await state.deps.politeness?.gate
    .leave(plan.target, entry, {
      failureReply: result.failure?.reply,
      spoke: result.failure?.reply !== undefined || result.rcpt.length > 0 || result.failure === undefined,
      rcptReplies: result.rcpt.map(({ reply }) => reply),
      answered: result.rcptReplies,
    })
    .catch(() => undefined);
}

/**
 * A server that refused the egress by name: it is set aside, and the same recipients go through
 * another egress (another address) when one is left and the deadline allows.
 */
function retryElsewhere(state: ProbeState, plan: SessionPlan, result: SmtpSessionResult): boolean {
  const ways = state.deps.egress;
  if (plan.egress === undefined || ways === undefined || !refusedTheEgress(result)) return false;
  const setAside = ways.pool.setAside(plan.egress, plan.egressKey);
  ways.onBlock?.(plan.egress, state.provider, setAside);
  return (
    setAside &&
    ways.pool.hasAlternative(plan.egress, plan.egressKey) &&
    state.context.deadlineAt - Date.now() > state.tuning.minRetryTimeLeftMs
  );
}

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

/**
 * The call's deadline cut the session before any RCPT went out (connecting, greeting, EHLO,
 * STARTTLS): its recipients were not asked, as if it had never had its slot.
 */
function cutBeforeAsking(result: SmtpSessionResult): boolean {
  const failure = result.failure;
  if (failure?.kind !== 'aborted' || result.rcpt.length > 0) return false;
  return failure.stage === 'connect' || failure.stage === 'banner' || failure.stage === 'ehlo' || failure.stage === 'starttls';
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
