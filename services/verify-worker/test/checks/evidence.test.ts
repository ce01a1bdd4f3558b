/**
 * The evidence rule on the reply patterns of real servers: each case is one domain's replies
 * from one server, the control (a random local part) and the real addresses.
 */
import { describe, expect, it } from 'vitest';
import { weighEvidence, type SmtpReply } from '../../src/checks/index.ts';

const ok: SmtpReply = { code: 250, enhanced: '2.1.5', text: 'OK' };
const weigh = (control: SmtpReply | undefined, mailboxes: Record<string, SmtpReply>) =>
  weighEvidence({ ...(control === undefined ? {} : { control }), mailboxes: new Map(Object.entries(mailboxes)) });
const classes = (found: ReturnType<typeof weighEvidence>) =>
  Object.fromEntries([...found.mailboxes].map(([address, finding]) => [address, `${finding.class} by ${finding.by}`]));

describe('evidence rule', () => {
  it('hosted mail: known accepted, control refused "5.4.1 Access denied" → not catch-all, the same refusal means unknown', () => {
    const denied = (id: string): SmtpReply => ({
      code: 550,
      enhanced: '5.4.1',
      text: `Recipient address rejected: Access denied. AS(${id})`,
    });
    const found = weigh(denied('201806281'), { 'ann@x': ok, 'bob@x': denied('201806282') });
    expect(found.catchAll).toBe(false);
    expect(classes(found)).toEqual({ 'ann@x': 'accepted by reply', 'bob@x': 'rejected_unknown by control' });
  });

  it('the same holds for a plain 550 without enhanced status, in a language the table cannot read', () => {
    const refused = (who: string): SmtpReply => ({ code: 550, text: `Vastaanottajaa ${who} ei voida toimittaa` });
    const found = weigh(refused('x1'), { 'ann@x': ok, 'bob@x': refused('bob') });
    expect(found.catchAll).toBe(false);
    expect(classes(found)['bob@x']).toBe('rejected_unknown by control');
  });

  it('an IP ban: every recipient, known or random, refused alike with 5.7.606 → blocked, catch-all unknown', () => {
    const ban: SmtpReply = { code: 550, enhanced: '5.7.606', text: 'Access denied, banned sending IP [203.0.113.9]' };
    const found = weigh(ban, { 'ann@x': ban, 'bob@x': ban });
    expect(found.catchAll).toBeNull();
    expect(classes(found)).toEqual({ 'ann@x': 'blocked by reply', 'bob@x': 'blocked by reply' });
  });

  it('every recipient refused alike with words the table reads as "unknown" → the refusal speaks of the client', () => {
    const same: SmtpReply = { code: 550, text: 'Requested action not taken: mailbox unavailable' };
    const found = weigh(same, { 'ann@x': same, 'bob@x': same });
    expect(found.catchAll).toBeNull();
    expect(classes(found)).toEqual({ 'ann@x': 'blocked by all_refused', 'bob@x': 'blocked by all_refused' });
  });

  it('every recipient refused alike with an ambiguous hosted-mail reply and nothing accepted → blocked, not unknown', () => {
    const denied: SmtpReply = { code: 550, enhanced: '5.4.1', text: 'Recipient address rejected: Access denied' };
    expect(classes(weigh(denied, { 'bob@x': denied }))).toEqual({ 'bob@x': 'blocked by all_refused' });
  });

  it('but an RFC 3463 mailbox status to everyone is believed: stale addresses of one domain are common', () => {
    const unknown: SmtpReply = { code: 550, enhanced: '5.1.1', text: 'User unknown' };
    const found = weigh(unknown, { 'old1@x': unknown, 'old2@x': unknown });
    expect(found.catchAll).toBe(false);
    expect(classes(found)).toEqual({ 'old1@x': 'rejected_unknown by reply', 'old2@x': 'rejected_unknown by reply' });
  });

  it('postmaster accepted stands for a known mailbox, except against a refusal that names a block of the client', () => {
    const weighWithPostmaster = (refusal: SmtpReply) =>
      weighEvidence({ control: refusal, postmaster: ok, mailboxes: new Map([['bob@x', refusal]]) });
    const words: SmtpReply = { code: 554, text: "delivery error: dd This user doesn't have a x.example account" };
    const denied: SmtpReply = { code: 550, enhanced: '5.4.1', text: 'Recipient address rejected: Access denied' };
    const listed: SmtpReply = { code: 554, enhanced: '5.7.1', text: 'Client host [203.0.113.9] blocked using zen.spamhaus.org' };
    expect(classes(weighWithPostmaster(words))).toEqual({ 'bob@x': 'rejected_unknown by control' });
    expect(weighWithPostmaster(words).catchAll).toBe(false);
    expect(classes(weighWithPostmaster(denied))).toEqual({ 'bob@x': 'rejected_unknown by control' });
    expect(classes(weighWithPostmaster(listed))).toEqual({ 'bob@x': 'blocked by reply' });
    // Postmaster refused too: everything refused alike speaks of the client.
    expect(classes(weighEvidence({ control: words, postmaster: words, mailboxes: new Map([['bob@x', words]]) }))).toEqual({
      'bob@x': 'blocked by all_refused',
    });
  });

  it('a refusal of another kind than the control keeps its own meaning', () => {
    const found = weigh(
      { code: 550, enhanced: '5.1.1', text: 'User unknown' },
      {
        'ann@x': ok,
        'full@x': { code: 552, enhanced: '5.2.2', text: 'Mailbox full' },
        'off@x': { code: 550, enhanced: '5.2.1', text: 'Account disabled' },
        'pol@x': { code: 550, enhanced: '5.7.1', text: 'Recipient refuses external mail' },
      },
    );
    expect(classes(found)).toMatchObject({ 'full@x': 'full by reply', 'off@x': 'disabled by reply', 'pol@x': 'blocked by reply' });
  });

  it('a 5.7.x refusal of one mailbox where others are accepted is read by its words: the server accepts the prober', () => {
    const found = weigh(
      { code: 550, enhanced: '5.1.1', text: 'User unknown' },
      {
        'ann@x': ok,
        'gone@x': { code: 554, enhanced: '5.7.1', text: '<gone@x>: Recipient address rejected: This account has been disabled' },
        'who@x': { code: 550, enhanced: '5.7.1', text: 'No such user!' },
      },
    );
    expect(classes(found)).toMatchObject({ 'gone@x': 'disabled by control', 'who@x': 'rejected_unknown by control' });
    // Alone, the same 5.7.1 reads as a block of the client: nothing shows the server accepts the prober.
    const alone = { code: 550, enhanced: '5.7.1', text: 'No such user!' };
    expect(classes(weigh(undefined, { 'who@x': alone }))).toEqual({ 'who@x': 'blocked by reply' });
  });

  it('words decide the kind when words decided the meaning: "user unknown" and "mailbox full" under the same bare 550 differ', () => {
    const found = weigh({ code: 550, text: 'User unknown' }, { 'ann@x': ok, 'full@x': { code: 550, text: 'Mailbox full' } });
    expect(classes(found)['full@x']).toBe('full by reply');
  });

  it('control accepted → catch-all; control greylisted or absent → unknown; temporary replies are never compared', () => {
    expect(weigh(ok, { 'ann@x': ok }).catchAll).toBe(true);
    const grey: SmtpReply = { code: 451, enhanced: '4.7.1', text: 'Greylisted' };
    const found = weigh(grey, { 'ann@x': ok, 'bob@x': grey });
    expect(found.catchAll).toBeNull();
    expect(classes(found)['bob@x']).toBe('greylisted by reply');
    expect(weigh(undefined, { 'ann@x': ok }).catchAll).toBeNull();
  });

  it('a relay denial is never evidence about mailboxes', () => {
    const relay: SmtpReply = { code: 553, text: "sorry, that domain isn't in my list of allowed rcpthosts" };
    const found = weigh(relay, { 'ann@x': relay });
    expect(found.catchAll).toBeNull();
    expect(classes(found)).toEqual({ 'ann@x': 'not_this_host by reply' });
  });
});
