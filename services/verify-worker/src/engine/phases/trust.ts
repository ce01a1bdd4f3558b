/**
 * Phase 4, trust: whether the verifier can believe its resolver and reach port 25 for this batch.
 * A negative answer or a failure is believed only from a resolver whose canaries resolved in a
 * check begun after the question was asked: a resolver that starts lying is caught by the first
 * batch it lies to, not up to a minute later. When the deadline comes first, the latest verdicts.
 */
import type { MailHostsLookup } from '../../dns/resolver.ts';
import { aborted, type BatchState } from '../batch-state.ts';
import type { VerifierDeps } from '../verifier-deps.ts';

/** Lookups whose verdict hangs on the resolver telling the truth: negative answers and failures. */
const DNS_DECIDES: ReadonlySet<MailHostsLookup['kind']> = new Set<MailHostsLookup['kind']>([
  'nxdomain',
  'null_mx',
  'no_mail_host',
  'temp_error',
  'timeout',
]);

export async function trustPhase(batch: BatchState, deps: Pick<VerifierDeps, 'health'>): Promise<void> {
  const health = deps.health;
  if (health === undefined) {
    batch.sight = { resolverTrusted: true, canProbe: await batch.egressOpen };
    return;
  }
  const { lookups } = batch;
  const latest = aborted(batch.call.signal).then(() => health.latest().resolverTrusted);
  const negative = [...lookups.values()].some((lookup) => DNS_DECIDES.has(lookup.kind)) || lookups.size < batch.domains.length;
  const resolverTrusted = await Promise.race([negative ? health.resolverTrustedSince(batch.lookedUpAt) : health.resolverTrusted(), latest]);
  batch.sight = { resolverTrusted, canProbe: await batch.egressOpen };
}
