import { describe, expect, it } from 'vitest';
import { classifyRcptReply, classifySessionReply, type RcptClass } from '../../src/checks/index.ts';

describe('RCPT reply classification', () => {
  it.each<[number, string | undefined, string, RcptClass]>([
    [250, '2.1.5', 'OK', 'accepted'],
    [251, undefined, 'User not local; will forward', 'accepted'],
    [252, '2.1.5', 'Cannot VRFY user, but will accept', 'inconclusive'],
    [550, '5.1.1', 'The email account that you tried to reach does not exist', 'rejected_unknown'],
    [553, '5.1.3', 'Bad recipient address syntax', 'rejected_unknown'],
    [550, '5.2.1', 'Mailbox disabled', 'disabled'],
    [552, '5.2.2', 'Mailbox full', 'full'],
    [452, '4.2.2', 'Over quota', 'full'],
    [552, undefined, 'Requested mail action aborted: exceeded storage allocation', 'full'],
    [451, '4.7.1', 'Greylisted, please try again later', 'greylisted'],
    [450, '4.7.1', 'Rate limit exceeded', 'greylisted'],
    [421, undefined, 'Too many connections', 'greylisted'],
    [450, undefined, 'Mailbox busy', 'greylisted'],
    [550, '5.7.1', 'Service unavailable; client host blocked using zen.spamhaus.org', 'blocked'],
    [554, '5.7.1', 'Relay access denied', 'blocked'],
    [550, undefined, 'Your IP is listed at bl.spamcop.net', 'blocked'],
    [550, undefined, 'No such user here', 'rejected_unknown'],
    [550, undefined, 'Requested action not taken: mailbox unavailable', 'rejected_unknown'],
    [550, undefined, 'Mailbox unavailable: listed in Spamhaus', 'blocked'],
    [550, undefined, 'Account has been disabled', 'disabled'],
    [550, undefined, '', 'unknown'],
    [554, undefined, 'Transaction failed', 'unknown'],
    [452, undefined, 'Insufficient system storage', 'temporary'],
  ])('%i %s %s → %s', (code, enhanced, text, expected) => {
    expect(classifyRcptReply({ code, enhanced, text })).toBe(expected);
  });
});

describe('session reply classification (banner, EHLO, MAIL FROM)', () => {
  it('4xx is temporary, 554 and 5.7.x and blocklist texts are a block of the prober', () => {
    expect(classifySessionReply({ code: 421, text: 'Service not available' })).toBe('greylisted');
    expect(classifySessionReply({ code: 554, text: 'No SMTP service here' })).toBe('blocked');
    expect(classifySessionReply({ code: 550, enhanced: '5.7.1', text: 'Sender rejected' })).toBe('blocked');
    expect(classifySessionReply({ code: 500, text: 'Syntax error' })).toBe('unknown');
  });
});
