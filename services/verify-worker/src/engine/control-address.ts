/**
 * The control of a domain: a local part no one owns, asked about with the real addresses so
 * that the server's answer to a certainly unknown mailbox is known (the evidence rule).
 *
 * It looks random to the server but stays the same for one domain through one UTC day and
 * across the workers of a deployment (derived from the envelope sender): a greylisting server
 * lets a recipient through only when it was asked about before, so a fresh random control on
 * each retry would stay greylisted forever, and the catch-all question unanswered.
 */
import { createHash } from 'node:crypto';

const DAY_MS = 86_400_000;

export function controlAddress(domain: string, seed: string, now: number = Date.now()): string {
  const day = Math.floor(now / DAY_MS);
  const local = createHash('sha256').update(`control|${seed}|${domain}|${day}`).digest('hex').slice(0, 18);
  return `${local}@${domain}`;
}

/** `postmaster@` of a domain: a mailbox RFC 5321 §4.5.1 requires, asked beside the control as a known one. */
export const postmasterOf = (domain: string): string => `postmaster@${domain}`;
