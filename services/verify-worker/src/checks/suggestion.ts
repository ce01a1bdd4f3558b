/**
 * Typo suggestions for popular providers and TLDs (mailcheck's algorithm). Conservative: never
 * for a domain that is itself a known provider, and only to a domain that is. The algorithm
 * reads the domain alone, so the suggestion is a domain; the caller pairs it with the entry's
 * own local part (engine/results.ts) and computes it once per domain (it costs CPU time).
 */
import spellChecker from '@zootools/email-spell-checker';
import { isFreeProvider } from './domain-lists.ts';

const POPULAR = new Set(spellChecker.POPULAR_DOMAINS);

export function suggestDomain(domain: string): string | undefined {
  if (POPULAR.has(domain) || isFreeProvider(domain)) return undefined;
  let suggestion: { domain: string } | undefined;
  try {
    suggestion = spellChecker.run({ email: `x@${domain}` });
  } catch {
    // The library URI-encodes its input; a suggestion is never worth failing an entry for.
    return undefined;
  }
  if (suggestion === undefined || suggestion.domain === domain) return undefined;
  return POPULAR.has(suggestion.domain) || isFreeProvider(suggestion.domain) ? suggestion.domain : undefined;
}
