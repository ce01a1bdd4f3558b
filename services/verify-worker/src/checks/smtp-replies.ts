/**
 * What a mail server's reply says about a mailbox: one table, read top to bottom, first match
 * wins. Reply code and RFC 3463 enhanced status first; the text only when they say too little.
 */
export type RcptClass =
  'accepted' | 'inconclusive' | 'rejected_unknown' | 'disabled' | 'full' | 'greylisted' | 'blocked' | 'temporary' | 'unknown';

export interface Reply {
  code: number;
  enhanced?: string;
  text: string;
}

interface Rule {
  when: string;
  test: (reply: Reply) => boolean;
  class: RcptClass;
}

const enhanced = (pattern: RegExp) => (reply: Reply) => reply.enhanced !== undefined && pattern.test(reply.enhanced);
const codeIn =
  (...codes: number[]) =>
  (reply: Reply) =>
    codes.includes(reply.code);
const permanent = (reply: Reply) => reply.code >= 500 && reply.code < 600;
const text = (pattern: RegExp) => (reply: Reply) => pattern.test(reply.text);

/** Texts that speak of the connecting client (our prober), not of the mailbox. */
const ABOUT_THE_CLIENT =
  /spamhaus|spamcop|barracuda|sorbs|blocklist|block list|blacklist|black list|listed (at|on|in)|\bblocked\b|\bbanned\b|client host|reverse dns|\bptr\b|your ip|ip address|poor reputation|access denied|not authorized|policy/i;
const UNKNOWN_MAILBOX =
  /user unknown|unknown user|no such (user|mailbox|recipient)|does ?n[o']t exist|not exist|mailbox (is )?unavailable|mailbox not found|recipient not found|invalid (recipient|mailbox|address)|recipient (address )?rejected|unrouteable|no mailbox|address rejected/i;
const DISABLED = /disabled|deactivated|inactive|suspended|no longer (active|in use)|account (is )?closed/i;
const FULL = /mailbox (is )?full|over ?quota|quota exceeded|insufficient storage|exceeded storage/i;

export const RCPT_REPLY_TABLE: readonly Rule[] = [
  { when: '250, 251: the server takes mail for this mailbox', test: codeIn(250, 251), class: 'accepted' },
  { when: '252: cannot verify, will attempt delivery', test: codeIn(252), class: 'inconclusive' },
  { when: '4.7.x: greylisting or rate limiting', test: enhanced(/^4\.7\./), class: 'greylisted' },
  { when: '5.7.x: policy refusal of the client', test: enhanced(/^5\.7\./), class: 'blocked' },
  {
    when: 'X.2.2 or 552: mailbox full',
    test: (r) => enhanced(/^[45]\.2\.2$/)(r) || (r.code === 552 && r.enhanced === undefined),
    class: 'full',
  },
  { when: 'X.2.1: mailbox disabled', test: enhanced(/^[45]\.2\.1$/), class: 'disabled' },
  {
    when: '550/551/553 with 5.1.x: no such mailbox',
    test: (r) => codeIn(550, 551, 553)(r) && enhanced(/^5\.1\.\d+$/)(r),
    class: 'rejected_unknown',
  },
  { when: '421, 450, 451: try again later', test: codeIn(421, 450, 451), class: 'greylisted' },
  {
    when: '5xx whose text speaks of the client (blocklists, policy)',
    test: (r) => permanent(r) && text(ABOUT_THE_CLIENT)(r),
    class: 'blocked',
  },
  { when: '5xx whose text says the mailbox is disabled', test: (r) => permanent(r) && text(DISABLED)(r), class: 'disabled' },
  { when: '5xx whose text says the mailbox is full', test: (r) => permanent(r) && text(FULL)(r), class: 'full' },
  {
    when: '5xx whose text says the mailbox does not exist',
    test: (r) => permanent(r) && text(UNKNOWN_MAILBOX)(r),
    class: 'rejected_unknown',
  },
  // A bare 550 proves nothing about the mailbox (servers use it for policy too): not undeliverable.
  { when: 'any other 5xx', test: permanent, class: 'unknown' },
  { when: 'any other 4xx', test: (r) => r.code >= 400 && r.code < 500, class: 'temporary' },
];

export function classifyRcptReply(reply: Reply): RcptClass {
  return RCPT_REPLY_TABLE.find((rule) => rule.test(reply))?.class ?? 'unknown';
}

/**
 * A reply that ended the session before RCPT (banner, EHLO, MAIL FROM): it speaks of the
 * prober or of the server's state, never of a mailbox.
 */
export function classifySessionReply(reply: Reply): 'blocked' | 'greylisted' | 'unknown' {
  if (reply.code >= 400 && reply.code < 500) return 'greylisted';
  if (reply.code === 554 || enhanced(/^5\.7\./)(reply) || text(ABOUT_THE_CLIENT)(reply)) return 'blocked';
  return 'unknown';
}
