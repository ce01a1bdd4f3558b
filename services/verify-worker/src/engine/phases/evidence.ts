/**
 * Control evidence across batches (decisions, "Politeness at volume"): what a domain's controls
 * showed in an earlier batch answers for them in this one, when the domain's MX set is the same;
 * what this batch's controls showed, when definite, is kept for the next ones.
 */
import type { MailHost } from '../../dns/resolver.ts';
import type { BatchState } from '../batch-state.ts';
import { postmasterOf } from '../control-address.ts';
import { definite, type ControlEvidence } from '../control-evidence.ts';
import type { VerifierDeps } from '../verifier-deps.ts';
import { isProbed } from './resolve.ts';

type EvidenceStore = VerifierDeps['evidence'];

export const mxSetOf = (hosts: MailHost[]): string => hosts.map((host) => host.name).join(' ');

/** Control evidence kept from earlier batches, for domains whose MX set is the same. */
export async function knownEvidence(batch: BatchState, store: EvidenceStore): Promise<Map<string, ControlEvidence>> {
  const known = new Map<string, ControlEvidence>();
  if (store === undefined) return known;
  const domains = new Set([...batch.toProbe.values()].map((parsed) => parsed.domain));
  await Promise.all(
    [...domains].map(async (domain) => {
      const lookup = batch.lookups.get(domain);
      if (!isProbed(lookup)) return;
      const evidence = await store.get(domain).catch(() => undefined);
      if (evidence !== undefined && evidence.mxSet === mxSetOf(lookup.hosts)) known.set(domain, evidence);
    }),
  );
  return known;
}

/** Evidence from an earlier batch answers in place of the controls not asked again. */
export function answerFromEvidence(batch: BatchState): void {
  for (const [domain, evidence] of batch.known) {
    batch.outcomes.set(batch.controls.get(domain) ?? '', { kind: 'rcpt', reply: evidence.control, server: evidence.server });
    if (evidence.postmaster !== undefined)
      batch.outcomes.set(postmasterOf(domain), { kind: 'rcpt', reply: evidence.postmaster, server: evidence.server });
  }
}

/** Keeps what this batch's controls showed, when definite, for the next batches. */
export async function keepEvidence(batch: BatchState, store: EvidenceStore): Promise<void> {
  if (store === undefined) return;
  const { outcomes } = batch;
  const writes: Array<Promise<void>> = [];
  for (const [domain, control] of batch.controls) {
    const lookup = batch.lookups.get(domain);
    const answer = outcomes.get(control);
    if (batch.known.has(domain) || !isProbed(lookup) || answer?.kind !== 'rcpt' || !definite(answer.reply)) continue;
    const postmaster = outcomes.get(postmasterOf(domain));
    const samePostmaster = postmaster?.kind === 'rcpt' && postmaster.server === answer.server && definite(postmaster.reply);
    const evidence: ControlEvidence = {
      mxSet: mxSetOf(lookup.hosts),
      server: answer.server,
      control: answer.reply,
      ...(samePostmaster ? { postmaster: postmaster.reply } : {}),
    };
    writes.push(store.set(domain, evidence).catch(() => undefined));
  }
  await Promise.all(writes);
}
