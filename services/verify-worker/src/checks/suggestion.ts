/**
 * Typo suggestions for popular providers and TLDs (mailcheck's algorithm). Conservative: never
 * for a domain that is itself a known provider, and only to a domain that is.
 */
import spellChecker from '@zootools/email-spell-checker';
import { isFreeProvider } from './domain-lists.ts';

const POPULAR = new Set(spellChecker.POPULAR_DOMAINS);

export function suggestAddress(local: string, domain: string): string | undefined {
  if (POPULAR.has(domain) || isFreeProvider(domain)) return undefined;
  const suggestion = spellChecker.run({ email: `${local}@${domain}` });
  if (suggestion === undefined || suggestion.domain === domain) return undefined;
  return POPULAR.has(suggestion.domain) || isFreeProvider(suggestion.domain) ? `${local}@${suggestion.domain}` : undefined;
}
