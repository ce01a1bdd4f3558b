/**
 * Resolver health: the DNS canaries (VERIFY_DNS_CANARIES) asked of the configured resolver,
 * never from the cache. While fewer than half resolve to an MX set the resolver is untrusted:
 * nothing is declared dead by DNS and nothing learnt from it is kept.
 */
import type { MxAnswer } from '../dns/resolver.ts';
import { resolverTrusted } from './canary-rule.ts';

export interface ResolverCanaries {
  /** Canaries that resolved to an MX set, and those that did not (with what they got). */
  resolved: string[];
  failed: Array<{ domain: string; answer: string }>;
  /** MX host names of the canaries that resolved, most preferred first: the default SMTP canaries. */
  mxHosts: string[];
}

export const NO_CANARY_ANSWER: ResolverCanaries = { resolved: [], failed: [], mxHosts: [] };

export function resolverCheck(
  canaries: readonly string[],
  probeMx: (domain: string) => Promise<MxAnswer>,
): () => Promise<{ healthy: boolean; detail: ResolverCanaries }> {
  return async () => {
    const answers = await Promise.all(canaries.map(async (domain) => ({ domain, answer: await probeMx(domain) })));
    const detail: ResolverCanaries = { resolved: [], failed: [], mxHosts: [] };
    for (const { domain, answer } of answers) {
      if (answer.kind === 'mx') {
        detail.resolved.push(domain);
        detail.mxHosts.push(...answer.names);
      } else detail.failed.push({ domain, answer: answer.kind === 'temp_error' ? answer.detail : answer.kind });
    }
    return { healthy: resolverTrusted(detail.resolved.length, canaries.length), detail };
  };
}

/** The one log line of an untrusted resolver: what it means for results, and what to do. */
export function untrustedMessage(canaries: readonly string[], detail: ResolverCanaries): string {
  const failed = detail.failed.map(({ domain, answer }) => `${domain}: ${answer}`).join(', ');
  return (
    `DNS resolver untrusted: fewer than half of VERIFY_DNS_CANARIES (${canaries.join(', ')}) resolve to an MX set (${failed}). ` +
    'Until it recovers no address is declared invalid_domain (they are risky/dns_unavailable) and nothing learnt from DNS is cached. ' +
    'Remedy: point VERIFY_DNS_SERVERS at a resolver that answers for the internet (the cloud provider’s, or 1.1.1.1:53), ' +
    'or let this host reach the one it has; if the canaries themselves are wrong for this network, set VERIFY_DNS_CANARIES.'
  );
}
