import { describe, expect, it } from 'vitest';
import {
  mailgunBody,
  postmarkBounce,
  postmarkDelivery,
  postmarkSpamComplaint,
  sendgridEvents,
  sendgridKeyPair,
  sendgridSignature,
  sesBounce,
  sesComplaint,
  sesDelivery,
  snsNotification,
  snsSubscriptionConfirmation,
} from '@svc/testkit/feedback-bodies';
import {
  SourceShapeError,
  confirmableUrl,
  mailgunSignatureOf,
  mailgunSignatureValid,
  normaliseAddress,
  parseSesMessage,
  readMailgun,
  readPostmark,
  readSendgrid,
  readSnsEnvelope,
  sendgridPublicKey,
  sendgridSignatureValid,
} from '../src/index.ts';

const at = new Date('2026-11-20T10:00:00.000Z');
const now = Date.UTC(2026, 10, 28);

describe('sources: native webhook bodies as events', () => {
  it('reads SendGrid events: delivered, bounce, blocked, deferred, spamreport; skips the rest', () => {
    const read = readSendgrid(
      sendgridEvents(
        [
          { email: 'a@x.example', event: 'delivered' },
          { email: 'b@x.example', event: 'bounce' },
          { email: 'c@x.example', event: 'bounce', type: 'blocked' },
          { email: 'd@x.example', event: 'deferred' },
          { email: 'e@x.example', event: 'spamreport' },
          { email: 'f@x.example', event: 'open' },
        ],
        at,
      ),
      now,
    );
    expect(read.events.map((event) => [event.email, event.outcome, event.at])).toEqual([
      ['a@x.example', 'delivered', at.getTime()],
      ['b@x.example', 'hard_bounce', at.getTime()],
      ['c@x.example', 'soft_bounce', at.getTime()],
      ['d@x.example', 'soft_bounce', at.getTime()],
      ['e@x.example', 'complaint', at.getTime()],
    ]);
    expect(read.skipped).toBe(1);
    expect(() => readSendgrid({ email: 'a@x.example' }, now)).toThrow(SourceShapeError);
  });

  it('reads Mailgun event-data: failed permanent/temporary, delivered, complained', () => {
    expect(readMailgun(mailgunBody('k', 'a@x.example', 'failed', at), now).events[0]).toMatchObject({
      outcome: 'hard_bounce',
      at: at.getTime(),
    });
    expect(readMailgun(mailgunBody('k', 'a@x.example', 'failed', at, 'temporary'), now).events[0]?.outcome).toBe('soft_bounce');
    expect(readMailgun(mailgunBody('k', 'a@x.example', 'delivered', at), now).events[0]?.outcome).toBe('delivered');
    expect(readMailgun(mailgunBody('k', 'a@x.example', 'complained', at), now).events[0]?.outcome).toBe('complaint');
    expect(readMailgun(mailgunBody('k', 'a@x.example', 'opened', at), now)).toEqual({ events: [], skipped: 1 });
    expect(() => readMailgun({ signature: {} }, now)).toThrow(SourceShapeError);
  });

  it('reads Postmark bounce, delivery and spam complaint records', () => {
    expect(readPostmark(postmarkBounce('a@x.example', at), now).events).toEqual([
      { email: 'a@x.example', outcome: 'hard_bounce', at: at.getTime(), source: 'postmark' },
    ]);
    expect(readPostmark(postmarkBounce('a@x.example', at, 'SoftBounce'), now).events[0]?.outcome).toBe('soft_bounce');
    expect(readPostmark(postmarkDelivery('a@x.example', at), now).events[0]?.outcome).toBe('delivered');
    expect(readPostmark(postmarkSpamComplaint('a@x.example', at), now).events[0]?.outcome).toBe('complaint');
    expect(() => readPostmark({ Email: 'a@x.example' }, now)).toThrow(SourceShapeError);
  });

  it('reads SES notifications inside SNS envelopes, and the subscription confirmation', () => {
    const envelope = readSnsEnvelope(snsNotification(sesBounce(['a@x.example', 'b@x.example'], at), at));
    expect(envelope.type).toBe('Notification');
    if (envelope.type !== 'Notification') return;
    expect(parseSesMessage(envelope.message, now).events.map((event) => [event.email, event.outcome])).toEqual([
      ['a@x.example', 'hard_bounce'],
      ['b@x.example', 'hard_bounce'],
    ]);
    expect(parseSesMessage(JSON.stringify(sesBounce(['a@x.example'], at, 'Transient')), now).events[0]?.outcome).toBe('soft_bounce');
    expect(parseSesMessage(JSON.stringify(sesComplaint(['a@x.example'], at)), now).events[0]?.outcome).toBe('complaint');
    expect(parseSesMessage(JSON.stringify(sesDelivery(['a@x.example'], at)), now).events[0]).toMatchObject({
      outcome: 'delivered',
      at: at.getTime(),
    });
    const confirmation = readSnsEnvelope(
      snsSubscriptionConfirmation('https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&Token=1', at),
    );
    expect(confirmation.type).toBe('SubscriptionConfirmation');
    expect(confirmableUrl('https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription', false)).toBeDefined();
    expect(confirmableUrl('https://sns.us-west-2.amazonaws.com.evil.example/', false)).toBeUndefined();
    expect(confirmableUrl('http://127.0.0.1:9/confirm', false)).toBeUndefined();
    expect(confirmableUrl('http://127.0.0.1:9/confirm', true)).toBeDefined();
  });

  it('normalises addresses: case, IDN domain, display names; refuses what is not an address', () => {
    expect(normaliseAddress(' Ann.Lee@Example.COM ')).toBe('ann.lee@example.com');
    expect(normaliseAddress('Ann <ann@bücher.example>')).toBe('ann@xn--bcher-kva.example');
    for (const bad of ['', 'no-at', '@x.example', 'a@', 'a@nodot', 'a b@x.example', 'a@-x.example'])
      expect(normaliseAddress(bad)).toBeNull();
  });
});

describe('signatures', () => {
  it('checks Mailgun HMAC signatures', () => {
    const body = mailgunBody('mailgun-signing-key', 'a@x.example', 'delivered', at);
    expect(mailgunSignatureValid('mailgun-signing-key', mailgunSignatureOf(body))).toBe(true);
    expect(mailgunSignatureValid('another-key', mailgunSignatureOf(body))).toBe(false);
    expect(mailgunSignatureValid('mailgun-signing-key', mailgunSignatureOf({ 'event-data': {} }))).toBe(false);
  });

  it('checks SendGrid ECDSA signatures over timestamp + raw body', () => {
    const { privateKey, publicKeyBase64 } = sendgridKeyPair();
    const key = sendgridPublicKey(publicKeyBase64);
    const raw = JSON.stringify(sendgridEvents([{ email: 'a@x.example', event: 'delivered' }], at));
    const headers = sendgridSignature(privateKey, raw, '1764900000');
    const signature = headers['X-Twilio-Email-Event-Webhook-Signature'];
    expect(sendgridSignatureValid(key, raw, signature, '1764900000')).toBe(true);
    expect(sendgridSignatureValid(key, `${raw} `, signature, '1764900000')).toBe(false);
    expect(sendgridSignatureValid(key, raw, signature, '1764900001')).toBe(false);
    expect(sendgridSignatureValid(key, raw, undefined, '1764900000')).toBe(false);
    expect(sendgridSignatureValid(key, raw, 'bm90IGEgc2lnbmF0dXJl', '1764900000')).toBe(false);
  });
});
