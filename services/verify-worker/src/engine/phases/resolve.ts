/**
 * Phase 3, resolve: each domain's mail hosts, looked up side by side within the deadline (a
 * lookup that fails is `temp_error`, one the deadline cut is missing); meanwhile port 25's state
 * is asked (needed before any session) and each domain's typo suggestion is computed.
 */
import { suggestDomain } from '../../checks/index.ts';
import type { MailHost, MailHostsLookup } from '../../dns/resolver.ts';
import { aborted, type BatchState } from '../batch-state.ts';
import type { VerifierDeps } from '../verifier-deps.ts';

/** A lookup that found mail hosts to probe. */
export const isProbed = (lookup: MailHostsLookup | undefined): lookup is { kind: 'mx' | 'implicit'; names: string[]; hosts: MailHost[] } =>
  lookup?.kind === 'mx' || lookup?.kind === 'implicit';

export async function resolvePhase(batch: BatchState, deps: Pick<VerifierDeps, 'lookupMailHosts' | 'health'>): Promise<void> {
  const { signal } = batch.call;
  const domains = [...new Set([...batch.toProbe.values()].map((parsed) => parsed.domain))];
  batch.domains = domains;
  batch.lookedUpAt = Date.now();
  const health = deps.health;
  batch.egressOpen =
    domains.length === 0 || health === undefined
      ? Promise.resolve(true)
      : Promise.race([health.egressOpen(), aborted(signal).then(() => health.latest().egressOpen)]);
  const looking = Promise.all(
    domains.map(async (domain) => {
      const lookup = await Promise.race([
        deps.lookupMailHosts(domain).catch((): MailHostsLookup => ({ kind: 'temp_error', detail: 'lookup failed' })),
        aborted(signal),
      ]);
      if (lookup !== undefined) batch.lookups.set(domain, lookup);
    }),
  );
  // The typo suggester costs CPU time (about 0.2 ms a domain) and depends on the domain alone:
  // once per domain, while the DNS queries are in flight rather than after the last reply.
  batch.suggestions = new Map(domains.map((domain) => [domain, suggestDomain(domain)]));
  await looking;
}
