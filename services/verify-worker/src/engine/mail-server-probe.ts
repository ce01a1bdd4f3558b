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
import { isTransient, retryAfterSeconds } from '../checks/index.ts';
import type { MailHost } from '../dns/resolver.ts';
import { sessionsOn } from './probe-session.ts';
import { ProbeState } from './probe-state.ts';
import type { MailServerProbeDeps, ProbeContext, ProbeOutcome, ProbeTuning } from './probe-types.ts';

export * from './probe-types.ts';

const isTemporary = (outcome: ProbeOutcome) => outcome.kind === 'session' && isTransient(outcome.reply);

export async function probeMailServers(
  hosts: MailHost[],
  recipients: string[],
  deps: MailServerProbeDeps,
  context: ProbeContext,
): Promise<Map<string, ProbeOutcome>> {
  const targets = hosts.map((host) => ({ name: host.name, addresses: deps.filterTargets(host.addresses) }));
  if (targets.every((target) => target.addresses.length === 0))
    return new Map(recipients.map((recipient): [string, ProbeOutcome] => [recipient, { kind: 'no_target' }]));
  const state = new ProbeState(hosts, recipients, deps, context);
  await rounds(state, targets);
  return state.finish();
}

/** Rounds over every address of every host, by preference, while servers refuse only for now and the deadline allows a wait. */
async function rounds(state: ProbeState, targets: Array<{ name: string; addresses: string[] }>): Promise<void> {
  const { signal, deadlineAt } = state.context;
  for (let round = 0; !state.over; round++) {
    const temporary = await oneRound(state, targets);
    if (state.over || temporary === undefined) break;
    const delayMs = retryDelay(temporary, round, state.tuning);
    if (delayMs === undefined || deadlineAt - Date.now() - delayMs < state.tuning.minRetryTimeLeftMs) break;
    const waited = await sleep(delayMs, true, { signal }).catch(() => false);
    if (!waited) break;
  }
}

/** One pass over the addresses not given up; returns the last temporary refusal met, if any. */
async function oneRound(state: ProbeState, targets: Array<{ name: string; addresses: string[] }>): Promise<ProbeOutcome | undefined> {
  let temporary: ProbeOutcome | undefined;
  for (const target of targets) {
    for (const address of target.addresses) {
      if (state.givenUp.has(address) || state.over) continue;
      const failure = await sessionsOn(state, address, target.name);
      if (failure === undefined) continue;
      state.lastFailure = failure;
      if (isTemporary(failure)) temporary = failure;
      else state.givenUp.add(address);
    }
  }
  return temporary;
}

/** The delay a temporary refusal asks for, or the next backoff step; undefined when no round is left. */
function retryDelay(outcome: ProbeOutcome, round: number, tuning: ProbeTuning): number | undefined {
  const asked = outcome.kind === 'session' ? retryAfterSeconds(outcome.reply.text) : undefined;
  if (asked !== undefined) return round === 0 ? asked * 1_000 : undefined;
  return tuning.retryDelaysMs[round];
}
