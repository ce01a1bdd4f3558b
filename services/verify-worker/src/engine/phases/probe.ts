/**
 * Phase 5, probe: the mail servers asked, when port 25 is open. Domains sharing an MX set share
 * sessions (mail-server-probe.ts); each domain's control and postmaster go first, unless an
 * earlier batch's evidence answers for them (evidence.ts), then its addresses. When no server at
 * all could be reached, port 25 may have closed since the last check: a check begun now tells a
 * blocked egress (`smtp_unavailable`) from servers that are down.
 */
import type { MailHost } from '../../dns/resolver.ts';
import { aborted, type BatchState } from '../batch-state.ts';
import { controlAddress, postmasterOf } from '../control-address.ts';
import { probeMailServers, type ProbeOutcome, type ServerLimits } from '../mail-server-probe.ts';
import type { VerifierDeps } from '../verifier-deps.ts';
import { answerFromEvidence, keepEvidence, knownEvidence } from './evidence.ts';
import { isProbed } from './resolve.ts';

type ProbeDeps = Pick<VerifierDeps, 'probe' | 'controlSeed' | 'evidence' | 'health'>;

export async function probePhase(batch: BatchState, deps: ProbeDeps): Promise<void> {
  if (!batch.sight.canProbe) return;
  const probedAt = Date.now();
  batch.known = await knownEvidence(batch, deps.evidence);
  batch.outcomes = await probeGroups(batch, deps);
  batch.sight.canProbe = await egressStillOpen(batch, deps, probedAt);
  answerFromEvidence(batch);
  if (batch.sight.canProbe && batch.sight.resolverTrusted) await keepEvidence(batch, deps.evidence);
}

/** A probe that reached no mail server. */
const unreached = (outcome: ProbeOutcome): boolean => outcome.kind === 'no_connect' || outcome.kind === 'timeout';

async function egressStillOpen(batch: BatchState, { health }: ProbeDeps, probedAt: number): Promise<boolean> {
  const { signal } = batch.call;
  const outcomes = [...batch.outcomes.values()];
  if (health === undefined || signal.aborted || outcomes.length === 0 || !outcomes.every(unreached)) return true;
  return Promise.race([health.egressOpenSince(probedAt), aborted(signal).then(() => health.latest().egressOpen)]);
}

interface ServerGroup {
  hosts: MailHost[];
  /** Each domain's addresses, in the order first seen. */
  byDomain: Map<string, string[]>;
}

/** Domains grouped by MX set (one group's sessions carry them all); each probed domain gets its control. */
function groupByServers(batch: BatchState, controlSeed: string): ServerGroup[] {
  const groups = new Map<string, ServerGroup>();
  for (const parsed of batch.toProbe.values()) {
    const lookup = batch.lookups.get(parsed.domain);
    if (!isProbed(lookup)) continue;
    const groupKey = lookup.hosts.map((host) => host.name).join(' ');
    const group = groups.get(groupKey) ?? { hosts: lookup.hosts, byDomain: new Map<string, string[]>() };
    groups.set(groupKey, group);
    if (!batch.controls.has(parsed.domain)) batch.controls.set(parsed.domain, controlAddress(parsed.domain, controlSeed));
    const addresses = group.byDomain.get(parsed.domain) ?? [];
    if (!addresses.includes(parsed.address)) addresses.push(parsed.address);
    group.byDomain.set(parsed.domain, addresses);
  }
  return [...groups.values()];
}

async function probeGroups(batch: BatchState, deps: ProbeDeps): Promise<Map<string, ProbeOutcome>> {
  const { signal, deadlineAt, beforeSession, freshConnection } = batch.call;
  const outcomes = new Map<string, ProbeOutcome>();
  /** Limits learnt per server address, shared by the groups of the batch. */
  const limits = new Map<string, ServerLimits>();
  await Promise.all(
    groupByServers(batch, deps.controlSeed).map(async (group) => {
      const recipients = [...group.byDomain].flatMap(([domain, addresses]) =>
        batch.known.has(domain) ? addresses : [batch.controls.get(domain) ?? '', postmasterOf(domain), ...addresses],
      );
      const found = await probeMailServers(group.hosts, [...new Set(recipients)], deps.probe, {
        signal,
        deadlineAt,
        beforeSession,
        freshConnection,
        limits,
      }).catch(() => new Map<string, ProbeOutcome>());
      for (const [recipient, outcome] of found) outcomes.set(recipient, outcome);
    }),
  );
  return outcomes;
}
