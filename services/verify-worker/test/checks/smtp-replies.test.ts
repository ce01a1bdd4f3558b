import { describe, expect, it } from 'vitest';
import { RCPT_REPLY_TABLE, classifySessionReply, readRcptReply, type RcptClass, type ReplyBasis } from '../../src/checks/index.ts';

describe('RCPT reply table: code and enhanced status first', () => {
  it.each<[number, string | undefined, string, RcptClass, ReplyBasis]>([
    [250, '2.1.5', 'OK', 'accepted', 'code'],
    [251, undefined, 'User not local; will forward to <ann@elsewhere.example>', 'accepted', 'code'],
    [252, '2.1.5', 'Cannot VRFY user, but will accept message and attempt delivery', 'inconclusive', 'code'],
    [550, '5.1.1', 'The email account that you tried to reach does not exist', 'rejected_unknown', 'enhanced'],
    [550, '5.1.10', 'RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup', 'rejected_unknown', 'enhanced'],
    [553, '5.1.3', 'Bad recipient address syntax', 'rejected_unknown', 'enhanced'],
    [551, '5.1.6', 'Mailbox has moved', 'rejected_unknown', 'enhanced'],
    [550, '5.2.1', 'Mailbox disabled', 'disabled', 'enhanced'],
    [552, '5.2.2', 'Mailbox full', 'full', 'enhanced'],
    [452, '4.2.2', 'Over quota', 'full', 'enhanced'],
    [552, undefined, 'Requested mail action aborted: exceeded storage allocation', 'full', 'code'],
    [451, '4.7.1', 'Greylisted, please try again later', 'greylisted', 'enhanced'],
    [450, '4.7.1', 'Rate limit exceeded', 'greylisted', 'enhanced'],
    [421, undefined, 'Too many connections', 'greylisted', 'code'],
    [450, undefined, 'Mailbox busy', 'greylisted', 'code'],
    [452, undefined, 'Insufficient system storage', 'temporary', 'code'],
    [550, '5.7.1', 'Service unavailable; client host blocked using zen.spamhaus.org', 'blocked', 'enhanced'],
    [550, '5.7.606', 'Access denied, banned sending IP [203.0.113.9]', 'blocked', 'enhanced'],
    [550, '5.1.8', 'Sender address rejected: Domain not found', 'blocked', 'enhanced'],
    [550, '5.1.2', 'Host unknown', 'not_this_host', 'enhanced'],
    [553, undefined, "sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)", 'not_this_host', 'text'],
    [553, undefined, "sorry, that domain isn't in my list of allowed recipient hosts", 'not_this_host', 'text'],
    [554, '5.7.1', '<ann@example.test>: Relay access denied', 'not_this_host', 'text'],
    [550, undefined, 'Your IP is listed at bl.spamcop.net', 'blocked', 'text'],
    [550, undefined, 'Mailbox unavailable: listed in Spamhaus', 'blocked', 'text'],
    [550, undefined, 'No such user here', 'rejected_unknown', 'text'],
    [
      554,
      undefined,
      "delivery error: dd This user doesn't have a yahoo.com account (ann@yahoo.com) [0] - mta1234.mail.ne1.yahoo.com",
      'rejected_unknown',
      'text',
    ],
    [550, undefined, 'Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#550', 'rejected_unknown', 'text'],
    [550, undefined, 'Requested action not taken: mailbox unavailable', 'rejected_unknown', 'text'],
    [550, undefined, 'Account has been disabled', 'disabled', 'text'],
    // Our envelope sender refused at RCPT time, under the status of the server's sender check.
    [550, undefined, 'Verification failed for <verify@probe.example> Unrouteable address Sender verify failed', 'blocked', 'text'],
    [550, '5.1.0', '<verify@probe.example>: Sender address rejected: undeliverable address: User unknown', 'blocked', 'text'],
    [553, undefined, 'Domain of sender address verify@probe.example does not exist', 'blocked', 'text'],
    // Relaying refused in other words, or a login asked for: not this domain's mail server.
    [553, undefined, 'Relaying disallowed. Invalid Domain - example.org', 'not_this_host', 'text'],
    [550, '5.7.1', 'Relaying to <ann@example.org> denied.', 'not_this_host', 'text'],
    [530, undefined, 'SMTP authentication is required.', 'not_this_host', 'text'],
    [550, undefined, '', 'unknown', 'none'],
    [554, undefined, 'Transaction failed', 'unknown', 'none'],
  ])('%i %s %s → %s by %s', (code, enhanced, text, expected, basis) => {
    expect(readRcptReply({ code, enhanced, text })).toMatchObject({ class: expected, basis });
  });

  it('reads neither "access denied" nor "policy" as anything: the hosted-mail unknown-recipient reply is left to the evidence', () => {
    // Large hosted-mail systems answer unknown recipients this way; it is not a block of the prober.
    expect(readRcptReply({ code: 550, enhanced: '5.4.1', text: 'Recipient address rejected: Access denied. AS(201806281)' })).toMatchObject(
      {
        class: 'unknown',
        basis: 'none',
      },
    );
    expect(readRcptReply({ code: 550, text: 'Access denied' }).class).toBe('unknown');
    expect(readRcptReply({ code: 550, text: 'Rejected by policy' }).class).toBe('unknown');
  });

  it.each<[string, RcptClass]>([
    ['Benutzer unbekannt', 'rejected_unknown'],
    ['Empfänger existiert nicht', 'rejected_unknown'],
    ["L'adresse n'existe pas", 'rejected_unknown'],
    ['Destinataire inconnu', 'rejected_unknown'],
    ['El usuario no existe', 'rejected_unknown'],
    ['Utente sconosciuto', 'rejected_unknown'],
    ['Caixa postal inexistente', 'rejected_unknown'],
    ['Gebruiker onbekend', 'rejected_unknown'],
    ['Utente inesistente', 'rejected_unknown'],
    ['Empfänger nicht gefunden', 'rejected_unknown'],
    ['Nie ma takiego użytkownika', 'rejected_unknown'],
    ['Ismeretlen felhasználó', 'rejected_unknown'],
    ['Utilizator necunoscut', 'rejected_unknown'],
    ['Ο χρήστης δεν υπάρχει', 'rejected_unknown'],
    ['Пользователь не существует', 'rejected_unknown'],
    ['用户不存在', 'rejected_unknown'],
    ['宛先のユーザーは存在しません', 'rejected_unknown'],
    ['Postfach voll', 'full'],
    ['Boîte aux lettres pleine', 'full'],
    ['Buzón lleno', 'full'],
    ['Konto deaktiviert', 'disabled'],
    ['Compte désactivé', 'disabled'],
    ['Ihre IP-Adresse steht auf einer schwarzen Liste', 'blocked'],
    ['Votre adresse IP est sur liste noire', 'blocked'],
  ])('a plain 550 in another language: %s → %s', (text, expected) => {
    expect(readRcptReply({ code: 550, text })).toMatchObject({ class: expected, basis: 'text' });
  });

  it('never reads the text of a temporary reply as permanent', () => {
    expect(readRcptReply({ code: 450, text: 'User unknown in local recipient table' }).class).toBe('greylisted');
    expect(readRcptReply({ code: 451, text: 'Benutzer unbekannt' }).class).toBe('greylisted');
  });

  it('documents every rule, and every rule is reachable', () => {
    const samples = [
      { code: 250, text: '' },
      { code: 251, text: '' },
      { code: 252, text: '' },
      { code: 552, enhanced: '5.2.2', text: '' },
      { code: 451, enhanced: '4.7.1', text: '' },
      { code: 421, text: '' },
      { code: 452, text: '' },
      { code: 550, enhanced: '5.1.1', text: '' },
      { code: 550, enhanced: '5.2.1', text: '' },
      { code: 550, enhanced: '5.1.2', text: '' },
      { code: 550, enhanced: '5.1.8', text: '' },
      { code: 550, text: 'Sender verify failed' },
      { code: 554, text: 'relay access denied' },
      { code: 550, enhanced: '5.7.1', text: '' },
      { code: 552, text: '' },
      { code: 550, text: 'blocked using spamhaus' },
      { code: 550, text: 'account disabled' },
      { code: 550, text: 'mailbox full' },
      { code: 550, text: 'user unknown' },
      { code: 550, text: '' },
    ];
    expect(new Set(samples.map((reply) => readRcptReply(reply).rule))).toEqual(new Set(RCPT_REPLY_TABLE.map((rule) => rule.when)));
  });
});

describe('session reply classification (greeting, EHLO, MAIL FROM, 421 at RCPT)', () => {
  it('4xx means come back later; any 5xx refuses the prober and says nothing of a mailbox', () => {
    expect(classifySessionReply({ code: 421, enhanced: '4.7.0', text: 'try again later' })).toBe('greylisted');
    expect(classifySessionReply({ code: 451, enhanced: '4.3.0', text: 'Temporary lookup failure' })).toBe('greylisted');
    expect(classifySessionReply({ code: 554, text: 'No SMTP service here' })).toBe('blocked');
    expect(classifySessionReply({ code: 550, enhanced: '5.7.1', text: 'Sender rejected' })).toBe('blocked');
    expect(classifySessionReply({ code: 500, text: 'Syntax error' })).toBe('blocked');
    expect(classifySessionReply({ code: 250, text: 'odd' })).toBe('unknown');
  });
});
