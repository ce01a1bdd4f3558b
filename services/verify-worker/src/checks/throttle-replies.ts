/**
 * Throttle replies: a temporary reply (`421`, `450`, `451`, `452`) that says the *client* asks
 * too often or too much, as the large providers word it in their postmaster documentation. Data
 * beside the reply rules (smtp-replies.ts), read top to bottom, first match wins.
 *
 * A throttle speaks of the connecting client (our egress address) and holds for every MX host
 * of the provider, so the prober backs off from the whole provider (provider-backoff.ts). A
 * reply about one mailbox ("receiving mail at a rate", over quota) throttles nothing: it is
 * read first and answers that address alone.
 *
 * Decisions:
 * - A bare `421 4.7.0 ... Service not available, try again later` (RFC 5321's "closing
 *   transmission channel") is not a throttle: servers send it when they restart or are busy for
 *   everyone, and a retry a second later often works. Gmail's own wording of its throttle at
 *   connection time ("Try again later, closing connection") is one.
 * - Greylisting (`4.7.1 Greylisted`, "try again in 300 seconds" for one triplet) is not a
 *   throttle either: it is about one sender and recipient pair.
 */
import { isTransient, type SmtpReply } from './smtp-replies.ts';

export type ThrottleScope = 'provider' | 'mailbox';

export interface ThrottleRule {
  when: string;
  scope: ThrottleScope;
  test: (reply: SmtpReply) => boolean;
}

const THROTTLE_CODES = new Set([421, 450, 451, 452]);
const temporary = (reply: SmtpReply) => isTransient(reply) && THROTTLE_CODES.has(reply.code);
const text = (pattern: RegExp) => (reply: SmtpReply) => temporary(reply) && pattern.test(reply.text);
const status = (pattern: RegExp) => (reply: SmtpReply) => temporary(reply) && reply.enhanced !== undefined && pattern.test(reply.enhanced);
const both = (codes: RegExp, words: RegExp) => (reply: SmtpReply) => status(codes)(reply) && words.test(reply.text);

export const THROTTLE_TABLE: readonly ThrottleRule[] = [
  // One mailbox: Gmail `450-4.2.1 The user you are trying to contact is receiving mail at a rate
  // that prevents additional messages from being delivered`; over quota on any provider.
  { when: '4.2.1: one mailbox receives too fast (Gmail)', scope: 'mailbox', test: status(/^4\.2\.1$/) },
  {
    when: '"the user you are trying to contact is receiving mail": one mailbox',
    scope: 'mailbox',
    test: text(/(user|recipient|mailbox)[^.]{0,60}receiving mail (at a rate|too (fast|quickly))/iu),
  },
  { when: '4.2.2: one mailbox is over quota', scope: 'mailbox', test: status(/^4\.2\.2$/) },
  {
    when: '"over quota", "mailbox full": one mailbox is full',
    scope: 'mailbox',
    test: text(/over ?quota|quota exceeded|mailbox (is )?full/iu),
  },

  // Gmail: `421-4.7.28 ... has detected an unusual rate of unsolicited mail originating from your IP address`.
  { when: 'Gmail 4.7.28: unusual rate from the client', scope: 'provider', test: status(/^4\.7\.28$/) },
  { when: '"unusual rate" or "unusual (amount|volume)"', scope: 'provider', test: text(/unusual (rate|amount|volume)/iu) },
  // Gmail at connection time: `421 4.7.0 Try again later, closing connection. (EHLO)`.
  { when: 'Gmail 4.7.0 "try again later, closing connection"', scope: 'provider', test: text(/try again later, closing connection/iu) },
  // Yahoo and AOL: `421 4.7.0 [TSS04] Messages from x temporarily deferred due to unexpected volume or user complaints`.
  { when: 'Yahoo [TSS04], [TSS09], [TS01]-[TS03]: deferred for volume or complaints', scope: 'provider', test: text(/\[TSS?\d{2}\]/u) },
  { when: '"deferred due to (unexpected )?volume"', scope: 'provider', test: text(/deferred due to (unexpected )?volume/iu) },
  // Microsoft 365: `451 4.7.500 Server busy. Please try again later from [x]. (S77714)`,
  // `451 4.7.650 The mail server [x] has been temporarily rate limited due to IP reputation`;
  // Outlook.com: `421 4.7.0 ... Server busy` and `RP-001`..`RP-003` ("we have limits for how many
  // messages can be sent per hour"), `451 4.7.652`, `451 4.7.651`.
  { when: 'Microsoft 4.7.500-4.7.699: server busy, rate limited', scope: 'provider', test: status(/^4\.7\.(5\d\d|6\d\d)$/) },
  { when: '"server busy", "too busy"', scope: 'provider', test: text(/server (is )?(too )?busy/iu) },
  { when: 'Outlook.com RP-001..RP-003: per-hour and per-day limits', scope: 'provider', test: text(/\bRP-00\d\b/u) },
  // Generic wording of a rate or connection limit (Apple, GMX/web.de, Yandex, Mail.ru, Mimecast,
  // Proofpoint, Barracuda, Postfix anvil): "too many connections", "rate limit", "too many messages".
  {
    when: '"too many (concurrent) connections / messages / sessions / recipients from"',
    scope: 'provider',
    test: text(
      /too many (concurrent |simultaneous |parallel )?(smtp )?(connections|sessions|messages|mails|emails|recipients (from|for this (session|ip)))/iu,
    ),
  },
  {
    when: '"rate limit(ed)", "rate exceeded", "limit exceeded"',
    scope: 'provider',
    test: text(/rate[- ]?limit|rate exceeded|(connection|message|sending|ip) limit (exceeded|reached)/iu),
  },
  {
    when: '"temporarily (deferred|rate limited|blocked) ... (rate|volume|reputation)"',
    scope: 'provider',
    test: both(/^4\.7\.\d+$/, /(volume|reputation|frequency)/iu),
  },
  // Mimecast (`421 [x] Too many connections`), Barracuda (`421 Too many concurrent SMTP connections
  // from this IP address`), Proofpoint (`421 4.7.0 ... Connection rate limit exceeded`), Yandex
  // and Mail.ru (`451 4.7.1 ... Too many messages`, "rate limit") are read by the generic rows above.
];

export interface ThrottleMeaning {
  scope: ThrottleScope;
  rule: string;
}

/** What a reply says of the client's rate, or undefined when it says nothing of it. */
export function readThrottle(reply: SmtpReply): ThrottleMeaning | undefined {
  const rule = THROTTLE_TABLE.find((candidate) => candidate.test(reply));
  return rule === undefined ? undefined : { scope: rule.scope, rule: rule.when };
}

/** The reply throttles the whole provider (every MX host of it), for the egress that received it. */
export const throttlesProvider = (reply: SmtpReply): boolean => readThrottle(reply)?.scope === 'provider';
