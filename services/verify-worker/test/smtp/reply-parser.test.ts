import { describe, expect, it } from 'vitest';
import { MAX_REPLY_BYTES, ReplyParser, SmtpProtocolError, ehloKeywords, publicReply } from '../../src/smtp/reply-parser.ts';
import { isTooManyRecipients } from '../../src/smtp/session.ts';

const feed = (...chunks: string[]) => {
  const parser = new ReplyParser();
  return chunks.flatMap((c) => parser.push(Buffer.from(c)));
};

describe('SMTP reply parser', () => {
  it('assembles a multi-line reply split across chunks and strips the repeated enhanced code', () => {
    const replies = feed(
      '550-5.1.1 The email account that you tried to reach does not exist. Please try\r\n550-5.1.1 double-checking the recip',
      "ient's email address\r\n550 5.1.1  https://support.google.com/mail/?p=NoSuchUser\r\n",
    );
    expect(replies.map(publicReply)).toEqual([
      {
        code: 550,
        enhanced: '5.1.1',
        text: "The email account that you tried to reach does not exist. Please try double-checking the recipient's email address https://support.google.com/mail/?p=NoSuchUser",
      },
    ]);
  });

  it('returns several replies from one chunk, in order (pipelined answers)', () => {
    const replies = feed('250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n452 4.5.3 Too many recipients\r\n');
    expect(replies.map((r) => [r.code, r.enhanced])).toEqual([
      [250, '2.1.0'],
      [250, '2.1.5'],
      [452, '4.5.3'],
    ]);
    expect(isTooManyRecipients(replies[2] ?? { code: 0, text: '' })).toBe(true);
  });

  it('accepts bare codes and LF-only line ends; ignores an enhanced code of another class', () => {
    const [bare, odd] = feed('250\n550 4.1.1 mismatched class\n');
    expect(bare).toMatchObject({ code: 250, text: '' });
    expect(odd?.enhanced).toBeUndefined();
    expect(odd?.text).toBe('4.1.1 mismatched class');
  });

  it('finds the enhanced status where servers put it: on a later line, after #, after a tag, quoted from a backend', () => {
    const statuses = feed(
      '550-Mailbox unknown. Either there is no mailbox associated with this\r\n550-name or you do not have authorization to see it.\r\n550 5.1.1 User unknown\r\n',
      '550 sorry, no mailbox here by that name. (#5.1.1)\r\n',
      '550 #5.7.1 Your access to submit messages to this e-mail system has been rejected.\r\n',
      '550 cuda_nsu 5.1.1 <ann@example.test>: Recipient address rejected: User unknown\r\n',
      '550 permanent failure for one or more recipients (ann@example.test:550 5.1.1 <ann@example.test>: User unknown)\r\n',
    ).map((reply) => reply.enhanced);
    expect(statuses).toEqual(['5.1.1', '5.1.1', '5.7.1', '5.1.1', '5.1.1']);
    const [later] = feed('550-Mailbox unknown.\r\n550 5.1.1 User unknown\r\n');
    expect(later?.text).toBe('Mailbox unknown. User unknown');
  });

  it('takes no address or version number for a status', () => {
    const replies = feed(
      '550 Client host [192.5.1.1] blocked\r\n',
      '451 Temporary local problem (Exim 4.94.2)\r\n',
      '550 5.1.1.1 is not a status\r\n',
      '451 see v4.7.1 of the policy\r\n',
    );
    expect(replies.map((reply) => reply.enhanced)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('drops control characters from the text', () => {
    const [reply] = feed('554 5.7.1 bad\u0007 \u001b[31mred\r\n');
    expect(reply?.text).toBe('bad [31mred');
  });

  it('reads EHLO keywords', () => {
    const [ehlo] = feed('250-mx.example\r\n250-PIPELINING\r\n250-SIZE 1000\r\n250-starttls\r\n250 SMTPUTF8\r\n');
    expect(ehlo && [...ehloKeywords(ehlo)]).toEqual(['PIPELINING', 'SIZE', 'STARTTLS', 'SMTPUTF8']);
  });

  it('refuses garbage and bounds an endless line or reply', () => {
    expect(() => feed('HTTP/1.1 400 Bad Request\r\n')).toThrow(SmtpProtocolError);
    const parser = new ReplyParser();
    const chunk = Buffer.alloc(16 * 1024, 'a');
    parser.push(Buffer.from('220 '));
    expect(() => {
      for (let i = 0; i < 5; i++) parser.push(chunk);
    }).toThrow(/longer than/);
    const lines = new ReplyParser();
    const line = Buffer.from(`250-${'x'.repeat(1000)}\r\n`);
    expect(() => {
      for (let i = 0; i <= MAX_REPLY_BYTES / line.length; i++) lines.push(line);
    }).toThrow(/longer than/);
  });

  it('recognises too-many-recipients replies, including the RFC 821 552 form', () => {
    expect(isTooManyRecipients({ code: 452, enhanced: '4.5.3', text: 'Error: too many recipients' })).toBe(true);
    expect(isTooManyRecipients({ code: 452, text: 'Too many recipients received this hour' })).toBe(true);
    expect(isTooManyRecipients({ code: 552, enhanced: '5.5.3', text: 'Too many recipients' })).toBe(true);
    expect(isTooManyRecipients({ code: 452, enhanced: '4.2.2', text: 'Mailbox full' })).toBe(false);
    expect(isTooManyRecipients({ code: 550, enhanced: '5.1.1', text: 'too many recipients' })).toBe(false);
  });
});
