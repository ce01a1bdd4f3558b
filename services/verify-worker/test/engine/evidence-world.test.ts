/**
 * The verifier against servers that word their replies as real ones do: the evidence of the
 * session (the control beside real mailboxes) decides where the words cannot.
 */
import { describe, expect, it } from 'vitest';
import { mailDomain, useWorld, verdicts } from './world.ts';

const world = useWorld(
  {
    ...mailDomain('hosted.test', '127.0.0.60'),
    ...mailDomain('banned.test', '127.0.0.61'),
    ...mailDomain('foreign.test', '127.0.0.62'),
    ...mailDomain('codeonly.test', '127.0.0.63'),
    ...mailDomain('deniedall.test', '127.0.0.64'),
    ...mailDomain('forward.test', '127.0.0.65'),
    ...mailDomain('noverify.test', '127.0.0.66'),
    ...mailDomain('notmine.test', '127.0.0.67'),
    ...mailDomain('stale.test', '127.0.0.68'),
    ...mailDomain('postfix-acl.test', '127.0.0.69'),
    // Two domains hosted by one provider (Google Workspace: every domain's MX is the same hosts).
    ...mailDomain('workspace.test', '127.0.0.70'),
    'other-workspace.test': { MX: [[10, 'mx.workspace.test']] },
    ...mailDomain('words-only.test', '127.0.0.71'),
    ...mailDomain('rbl.test', '127.0.0.72'),
  },
  {
    // Hosted mail: unknown recipients refused as "Access denied" with 5.4.1.
    '127.0.0.60': {
      users: ['ann@hosted.test', 'bob@hosted.test'],
      unknownReply: {
        code: 550,
        text: '5.4.1 Recipient address rejected: Access denied. AS(201806281) [BN8NAM12FT066.eop-nam12.prod.protection.outlook.com]',
      },
    },
    // An IP ban that reads almost the same: every recipient, known or random.
    '127.0.0.61': { users: ['ann@banned.test'], rcptReply: { code: 550, text: '5.7.606 Access denied, banned sending IP [127.0.0.1]' } },
    // A plain 550 in another language, no enhanced status codes at all.
    '127.0.0.62': { users: ['ann@foreign.test'], unknownReply: { code: 550, text: 'Destinatario inesistente: la casella non esiste' } },
    // A plain 550 whose words no table reads.
    '127.0.0.63': { users: ['ann@codeonly.test'], unknownReply: { code: 550, text: 'Ei voida toimittaa' } },
    // The same ambiguous refusal for everyone: it speaks of the client.
    '127.0.0.64': { users: ['ann@deniedall.test'], rcptReply: { code: 550, text: '5.4.1 Recipient address rejected: Access denied' } },
    '127.0.0.65': {
      mailboxes: { 'moved@forward.test': { code: 251, text: '2.1.5 User not local; will forward to <moved@elsewhere.test>' } },
    },
    '127.0.0.66': { rcptReply: { code: 252, text: '2.1.5 Cannot VRFY user, but will accept message and attempt delivery' } },
    // A host that is not this domain's mail server.
    '127.0.0.67': { users: ['ann@notmine.test'], localDomains: ['someone-else.test'] },
    // Honest 5.1.1 for every address of a stale list, control included.
    '127.0.0.68': {},
    // Postfix check_recipient_access: unknown users refused under 5.7.1 "Access denied".
    '127.0.0.69': {
      users: ['ann@postfix-acl.test'],
      unknownReply: { code: 550, text: '5.7.1 <x@postfix-acl.test>: Recipient address rejected: Access denied' },
    },
    '127.0.0.70': {
      users: ['ann@workspace.test', 'bob@other-workspace.test'],
      unknownReply: { code: 550, text: '5.1.1 The email account that you tried to reach does not exist. x1 - gsmtp' },
      oneDomainPerTransaction: true,
    },
    // Unknown recipients refused in words alone (Yahoo's wording); postmaster exists, as RFC 5321 requires.
    '127.0.0.71': {
      users: ['postmaster@words-only.test'],
      unknownReply: { code: 554, text: "delivery error: dd This user doesn't have a words-only.test account (x) [0] - mta1" },
    },
    // A blocklist check placed after the postmaster exemption: every other recipient refused.
    '127.0.0.72': {
      users: ['postmaster@rbl.test'],
      unknownReply: { code: 554, text: '5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org' },
    },
  },
);

describe('evidence within the session decides', () => {
  it('hosted mail "550 5.4.1 Access denied" for unknown recipients: known deliverable, unknown rejected, not catch-all', async () => {
    const results = await world.run(['ann@hosted.test', 'bob@hosted.test', 'nobody@hosted.test']);
    expect(verdicts(results)).toEqual({
      'ann@hosted.test': 'deliverable/accepted_email',
      'bob@hosted.test': 'deliverable/accepted_email',
      'nobody@hosted.test': 'undeliverable/rejected_email',
    });
    expect(results.every((result) => result.checks.catchAll === false)).toBe(true);
    expect(results[2]?.checks.smtp).toBe('rejected');
  });

  it('the same rule under 5.7.1 (Postfix access maps): the control tells an unknown recipient from a block', async () => {
    expect(verdicts(await world.run(['ann@postfix-acl.test', 'nobody@postfix-acl.test']))).toEqual({
      'ann@postfix-acl.test': 'deliverable/accepted_email',
      'nobody@postfix-acl.test': 'undeliverable/rejected_email',
    });
  });

  it('"550 5.7.606 Access denied, banned sending IP" to every recipient: smtp_blocked for all, catch-all unknown', async () => {
    const results = await world.run(['ann@banned.test', 'nobody@banned.test']);
    expect(verdicts(results)).toEqual({ 'ann@banned.test': 'risky/smtp_blocked', 'nobody@banned.test': 'risky/smtp_blocked' });
    expect(results.every((result) => result.checks.catchAll === null && result.checks.smtp === 'unknown')).toBe(true);
  });

  it('a plain 550 in another language, or in words nothing reads: decided by the control', async () => {
    expect(verdicts(await world.run(['ann@foreign.test', 'nobody@foreign.test', 'ann@codeonly.test', 'nobody@codeonly.test']))).toEqual({
      'ann@foreign.test': 'deliverable/accepted_email',
      'nobody@foreign.test': 'undeliverable/rejected_email',
      'ann@codeonly.test': 'deliverable/accepted_email',
      'nobody@codeonly.test': 'undeliverable/rejected_email',
    });
  });

  it('one ambiguous refusal for every recipient, known or random: smtp_blocked, never undeliverable', async () => {
    expect(verdicts(await world.run(['ann@deniedall.test', 'nobody@deniedall.test']))).toEqual({
      'ann@deniedall.test': 'risky/smtp_blocked',
      'nobody@deniedall.test': 'risky/smtp_blocked',
    });
  });

  it('an RFC 3463 "5.1.1 user unknown" for every address of a stale list is believed', async () => {
    expect(verdicts(await world.run(['old1@stale.test', 'old2@stale.test']))).toEqual({
      'old1@stale.test': 'undeliverable/rejected_email',
      'old2@stale.test': 'undeliverable/rejected_email',
    });
  });

  it('two domains of one mail provider: one session, a transaction per domain (Google refuses a second domain in one)', async () => {
    const server = world.smtp.get('127.0.0.70')!;
    const sessionsBefore = server.sessions;
    const transactionsBefore = server.transactions;
    const results = await world.run([
      'ann@workspace.test',
      'nobody@workspace.test',
      'bob@other-workspace.test',
      'ghost@other-workspace.test',
    ]);
    expect(verdicts(results)).toEqual({
      'ann@workspace.test': 'deliverable/accepted_email',
      'nobody@workspace.test': 'undeliverable/rejected_email',
      'bob@other-workspace.test': 'deliverable/accepted_email',
      'ghost@other-workspace.test': 'undeliverable/rejected_email',
    });
    expect(results.map((result) => result.checks.catchAll)).toEqual([false, false, false, false]);
    expect(server.sessions - sessionsBefore).toBe(1);
    expect(server.transactions - transactionsBefore).toBe(2);
  });

  it('one address alone, refused in words as the control is: postmaster accepted shows the server takes the prober', async () => {
    expect(verdicts(await world.run(['nobody@words-only.test']))).toEqual({ 'nobody@words-only.test': 'undeliverable/rejected_email' });
    // A blocklist refusal stays a refusal of the prober, postmaster exempted or not.
    expect(verdicts(await world.run(['ann@rbl.test']))).toEqual({ 'ann@rbl.test': 'risky/smtp_blocked' });
  });

  it('251 will forward: accepted; 252 cannot verify: risky/accept_all', async () => {
    expect(verdicts(await world.run(['moved@forward.test', 'anyone@noverify.test']))).toEqual({
      'moved@forward.test': 'deliverable/accepted_email',
      'anyone@noverify.test': 'risky/accept_all',
    });
  });

  it('553 "not in my list of allowed recipient hosts": not this domain’s mail server, risky/no_connect', async () => {
    const results = await world.run(['ann@notmine.test']);
    expect(verdicts(results)).toEqual({ 'ann@notmine.test': 'risky/no_connect' });
    expect(results[0]?.checks).toMatchObject({ smtp: 'unknown', catchAll: null });
  });
});
