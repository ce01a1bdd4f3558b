/**
 * A refusal that names the client rather than the mailbox: a blocklist (Spamhaus, Barracuda,
 * SpamCop, "blacklisted", "listed in", "RBL"), the client's reputation, or the client's own
 * address (`Client host [203.0.113.9] blocked`, `banned sending IP`). The egress pool sets the
 * egress that got it aside for that provider: another egress has another address.
 * Pure; the reply's text as the prober hands it over (smtp-replies.ts).
 */
import type { SmtpReply } from './smtp-replies.ts';

const BLOCKLIST =
  /\b(?:spamhaus|spamcop|barracuda(?:central)?|sorbs|uceprotect|invaluement|surbl|abuseat|cbl|psbl|dnsbl|rbl|blocklist(?:ed)?|block ?list(?:ed)?|blacklist(?:ed)?|black ?list(?:ed)?|denylist(?:ed)?|listed (?:in|on|at|by)|on our block|reputation)\b/i;
const CLIENT_ADDRESS =
  /(?:\[\s*(?:\d{1,3}\.){3}\d{1,3}\s*\]|\b(?:\d{1,3}\.){3}\d{1,3}\b|\[\s*[0-9a-f]*:[0-9a-f:]+\s*\]|\b(?:your|client|sending|connecting|source|remote) (?:host|ip|address|ip address|server)\b|\bip (?:address )?(?:is |has been )?(?:blocked|banned|rejected|blacklisted|listed|not allowed))/i;

/**
 * A permanent refusal that names a blocklist or the client's address. Temporary ones are left
 * alone: greylisting replies often quote the client's address and mean only "come back later".
 */
export function refusesTheClient(reply: SmtpReply): boolean {
  if (reply.code < 500 || reply.code > 599) return false;
  return BLOCKLIST.test(reply.text) || CLIENT_ADDRESS.test(reply.text);
}
