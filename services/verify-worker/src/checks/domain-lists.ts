/**
 * Facts about a domain from maintained lists: disposable providers (mailchecker), free mailbox
 * providers (email-providers). Subdomains count as their parent (`x.mailinator.com`).
 */
import { createRequire } from 'node:module';
import mailchecker from 'mailchecker';

const require = createRequire(import.meta.url);
const DISPOSABLE: ReadonlySet<string> = mailchecker.blacklist();
// The common list (major providers); the full one mixes in throwaway and reserved names.
const RESERVED = /(^|\.)(example\.(com|net|org)|test|invalid|localhost)$/; // RFC 2606
const FREE: ReadonlySet<string> = new Set((require('email-providers/common.json') as string[]).filter((domain) => !RESERVED.test(domain)));

function inList(list: ReadonlySet<string>, domain: string): boolean {
  const labels = domain.toLowerCase().split('.');
  for (let i = 0; i < labels.length - 1; i += 1) if (list.has(labels.slice(i).join('.'))) return true;
  return false;
}

export const isDisposableDomain = (domain: string): boolean => inList(DISPOSABLE, domain);
/** A disposable domain is not reported as a free provider too (it is worse than that). */
export const isFreeProvider = (domain: string): boolean => !isDisposableDomain(domain) && inList(FREE, domain);
