/** The throttle table: the providers' documented throttle texts throttle the provider; replies about one mailbox, greylisting and blocks do not. */
import { describe, expect, it } from 'vitest';
import { readThrottle, throttlesProvider } from '../../src/checks/throttle-replies.ts';
import type { SmtpReply } from '../../src/checks/index.ts';

const reply = (code: number, enhanced: string | undefined, text: string): SmtpReply => ({ code, ...(enhanced ? { enhanced } : {}), text });

describe('throttle replies', () => {
  it.each<[string, SmtpReply]>([
    [
      'Gmail 4.7.28 unusual rate',
      reply(
        421,
        '4.7.28',
        'Gmail has detected an unusual rate of unsolicited mail originating from your IP address. To protect our users from spam, mail sent from your IP address has been temporarily rate limited.',
      ),
    ],
    [
      'Gmail 4.7.0 at EHLO',
      reply(421, '4.7.0', 'Try again later, closing connection. (EHLO) d2e1a72fcca58-7f1b5b8b1sor1234567b3a.12 - gsmtp'),
    ],
    [
      'Microsoft 365 server busy',
      reply(
        451,
        '4.7.500',
        'Server busy. Please try again later from [203.0.113.5]. (S77714) [BN8NAM11FT012.eop-nam11.prod.protection.outlook.com]',
      ),
    ],
    [
      'Microsoft 365 rate limited for reputation',
      reply(451, '4.7.650', 'The mail server [203.0.113.5] has been temporarily rate limited due to IP reputation.'),
    ],
    [
      'Outlook.com RP-001',
      reply(
        421,
        undefined,
        "RP-001 (BAY004-MC1F10) Unfortunately, some messages from 203.0.113.5 weren't sent. Please try again. We have limits for how many messages can be sent per hour and per day.",
      ),
    ],
    [
      'Yahoo TSS04',
      reply(
        421,
        '4.7.0',
        '[TSS04] Messages from 203.0.113.5 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes',
      ),
    ],
    ['iCloud too many connections', reply(421, '4.7.0', 'Too many concurrent connections from this IP address, try again later')],
    [
      'GMX too many connections',
      reply(421, undefined, 'gmx.net (mxgmx117) Nemesis ESMTP Service not available; Too many connections from your IP address'),
    ],
    ['Yandex too many messages', reply(451, '4.7.1', 'Sorry, too many messages from your IP address, try again later')],
    ['Mimecast too many connections', reply(421, undefined, '[mimecast] Too many connections from 203.0.113.5, try again later')],
    ['Proofpoint rate limit', reply(421, '4.7.0', 'mx0a-00123456.pphosted.com Connection rate limit exceeded, try again later')],
    [
      'Barracuda concurrent connections',
      reply(421, undefined, 'Too many concurrent SMTP connections from this IP address; please try again later.'),
    ],
  ])('%s throttles the provider', (_name, throttle) => {
    expect(readThrottle(throttle)?.scope).toBe('provider');
    expect(throttlesProvider(throttle)).toBe(true);
  });

  it.each<[string, SmtpReply]>([
    [
      'Gmail: one mailbox receiving mail at a rate',
      reply(
        450,
        '4.2.1',
        'The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered. Please resend your message at a later point.',
      ),
    ],
    [
      'Gmail: over quota',
      reply(
        452,
        '4.2.2',
        'The email account that you tried to reach is over quota. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaTemp',
      ),
    ],
    ['over quota without enhanced code', reply(452, undefined, 'Mailbox full, over quota')],
  ])('%s is about one mailbox: throttles nothing', (_name, mailbox) => {
    expect(readThrottle(mailbox)?.scope).toBe('mailbox');
    expect(throttlesProvider(mailbox)).toBe(false);
  });

  it.each<[string, SmtpReply]>([
    ['greylisting', reply(451, '4.7.1', 'Greylisted, please try again in 300 seconds')],
    ['a server restarting', reply(421, '4.7.0', 'mx.example.net Service not available, try again later')],
    [
      'a ban (5xx)',
      reply(550, '5.7.1', 'Service unavailable; Client host [203.0.113.5] blocked using zen.spamhaus.org; too many connections'),
    ],
    ['an acceptance', reply(250, '2.1.5', 'OK')],
  ])('%s is no throttle', (_name, other) => {
    expect(throttlesProvider(other)).toBe(false);
  });
});
