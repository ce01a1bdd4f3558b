/**
 * Webhook bodies shaped as the sending services document them (their own examples, with the
 * address and time put in), for the feedback doors' tests, and their signatures.
 */
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

const unix = (at: Date): number => Math.floor(at.getTime() / 1_000);

/** SendGrid Event Webhook: an array of events (docs: "Event webhook reference", the bounce and delivered examples). */
export function sendgridEvents(
  entries: Array<{
    email: string;
    event: 'delivered' | 'bounce' | 'spamreport' | 'deferred' | 'open' | 'processed';
    type?: 'bounce' | 'blocked';
  }>,
  at: Date,
): unknown[] {
  return entries.map(({ email, event, type }, index) => ({
    email,
    timestamp: unix(at),
    'smtp-id': `<14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.${index}@ismtpd-555>`,
    event,
    category: ['cat facts'],
    sg_event_id: `sg_event_id_${index}`,
    sg_message_id: `sg_message_id_${index}.filter0001.16648.5515E0B88.0`,
    ...(event === 'bounce'
      ? { reason: '500 unknown recipient', status: '5.0.0', type: type ?? 'bounce', bounce_classification: 'Invalid Address' }
      : event === 'delivered'
        ? { response: '250 OK', ip: '168.1.1.1', tls: 1, cert_err: 0 }
        : event === 'deferred'
          ? { response: '400 try again later', attempt: '5' }
          : {}),
  }));
}

/** SendGrid's Signed Event Webhook: an ECDSA P-256 key pair, the public key as SendGrid shows it (base64 DER). */
export function sendgridKeyPair(): { privateKey: KeyObject; publicKeyBase64: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey, publicKeyBase64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') };
}

export function sendgridSignature(privateKey: KeyObject, rawBody: string, timestamp: string): Record<string, string> {
  return {
    'X-Twilio-Email-Event-Webhook-Signature': sign('sha256', Buffer.from(timestamp + rawBody, 'utf8'), privateKey).toString('base64'),
    'X-Twilio-Email-Event-Webhook-Timestamp': timestamp,
  };
}

/** Mailgun webhook (docs: "Webhooks", the permanent failure and delivered payloads), signed with `signingKey`. */
export function mailgunBody(
  signingKey: string,
  email: string,
  event: 'delivered' | 'failed' | 'complained' | 'opened',
  at: Date,
  severity: 'permanent' | 'temporary' = 'permanent',
): Record<string, unknown> {
  const timestamp = String(unix(at));
  const token = `a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0${timestamp.slice(-4)}`;
  return {
    signature: {
      timestamp,
      token,
      signature: createHmac('sha256', signingKey)
        .update(timestamp + token)
        .digest('hex'),
    },
    'event-data': {
      event,
      timestamp: at.getTime() / 1_000,
      id: 'G9Bn5sl1TC6nu79C8C0bwg',
      'log-level': event === 'failed' ? 'error' : 'info',
      ...(event === 'failed'
        ? {
            severity,
            reason: 'bounce',
            'delivery-status': { 'attempt-no': 1, message: '', code: 550, description: 'Not delivered', 'session-seconds': 0 },
          }
        : event === 'delivered'
          ? {
              'delivery-status': {
                tls: true,
                'mx-host': 'smtp-in.example.com',
                code: 250,
                description: '',
                'attempt-no': 1,
                message: 'OK',
              },
            }
          : {}),
      recipient: email,
      'recipient-domain': email.slice(email.indexOf('@') + 1),
      envelope: { transport: 'smtp', sender: 'bob@sandbox.mailgun.org', 'sending-ip': '209.61.154.250', targets: email },
      message: {
        headers: {
          to: email,
          'message-id': '20130503182626.18666.16540@sandbox.mailgun.org',
          from: 'Bob <bob@sandbox.mailgun.org>',
          subject: 'Test',
        },
      },
      flags: { 'is-routed': false, 'is-authenticated': true, 'is-system-test': false, 'is-test-mode': false },
    },
  };
}

/** Postmark webhooks (docs: "Bounce webhook", "Delivery webhook", "Spam complaint webhook"). */
export function postmarkBounce(
  email: string,
  at: Date,
  type: 'HardBounce' | 'SoftBounce' | 'SpamComplaint' = 'HardBounce',
): Record<string, unknown> {
  return {
    RecordType: 'Bounce',
    MessageStream: 'outbound',
    ID: 4323372036854775,
    Type: type,
    TypeCode: type === 'HardBounce' ? 1 : type === 'SoftBounce' ? 4096 : 512,
    Name: type === 'HardBounce' ? 'Hard bounce' : type,
    Tag: 'Test',
    MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
    Metadata: { a_key: 'a_value', b_key: 'b_value' },
    ServerID: 23,
    Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
    Details: 'Test bounce details',
    Email: email,
    From: 'sender@example.com',
    BouncedAt: at.toISOString(),
    DumpAvailable: true,
    Inactive: true,
    CanActivate: true,
    Subject: 'Test subject',
    Content: 'Test content',
  };
}

export function postmarkDelivery(email: string, at: Date): Record<string, unknown> {
  return {
    RecordType: 'Delivery',
    ServerID: 23,
    MessageStream: 'outbound',
    MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
    Recipient: email,
    Tag: 'welcome-email',
    DeliveredAt: at.toISOString(),
    Details: 'Test delivery webhook details',
    Metadata: { a_key: 'a_value', b_key: 'b_value' },
  };
}

export function postmarkSpamComplaint(email: string, at: Date): Record<string, unknown> {
  return {
    RecordType: 'SpamComplaint',
    MessageStream: 'outbound',
    ID: 42,
    Type: 'SpamComplaint',
    TypeCode: 512,
    Name: 'Spam complaint',
    Tag: 'Test',
    MessageID: '00000000-0000-0000-0000-000000000000',
    ServerID: 1234,
    Description: '',
    Details: 'Test spam complaint details',
    Email: email,
    From: 'sender@example.com',
    BouncedAt: at.toISOString(),
    DumpAvailable: true,
    Inactive: true,
    CanActivate: false,
    Subject: 'Test subject',
  };
}

const SNS_COMMON = {
  TopicArn: 'arn:aws:sns:us-west-2:123456789012:ses-feedback',
  SignatureVersion: '1',
  Signature:
    'EXAMPLEpH+DcEwjAPg8O9mY8dReBSwksfg2S7WKQcikcNKWLQjwu6A4VbeS0QHVCkhRS7fUQvi2egU3N858fiTDN6bkkOxYDVrY0Ad8L10Hs3zH81mtnPk5uvvolIC1CXGu43obcgFxeL3khZl8IKvO61GWB6jI9b5+gLPoBc1Q=',
  SigningCertURL: 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem',
};

/** An SNS Notification carrying SES's notification (docs: "Amazon SES notification examples"). */
export function snsNotification(message: Record<string, unknown>, at: Date): Record<string, unknown> {
  return {
    Type: 'Notification',
    MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
    ...SNS_COMMON,
    Subject: 'Amazon SES Email Event Notification',
    Message: JSON.stringify(message),
    Timestamp: at.toISOString(),
    UnsubscribeURL:
      'https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-west-2:123456789012:ses-feedback:c9135db0',
  };
}

export function snsSubscriptionConfirmation(subscribeUrl: string, at: Date): Record<string, unknown> {
  return {
    Type: 'SubscriptionConfirmation',
    MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
    Token:
      '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736',
    ...SNS_COMMON,
    Message:
      'You have chosen to subscribe to the topic arn:aws:sns:us-west-2:123456789012:ses-feedback.\nTo confirm the subscription, visit the SubscribeURL included in this message.',
    SubscribeURL: subscribeUrl,
    Timestamp: at.toISOString(),
  };
}

const sesMail = (recipients: string[], at: Date) => ({
  timestamp: at.toISOString(),
  source: 'john@example.com',
  sourceArn: 'arn:aws:ses:us-east-1:888888888888:identity/example.com',
  sourceIp: '127.0.3.0',
  sendingAccountId: '123456789012',
  messageId: '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000',
  destination: recipients,
});

export function sesBounce(recipients: string[], at: Date, bounceType: 'Permanent' | 'Transient' = 'Permanent'): Record<string, unknown> {
  return {
    notificationType: 'Bounce',
    bounce: {
      bounceType,
      bounceSubType: bounceType === 'Permanent' ? 'General' : 'MailboxFull',
      bouncedRecipients: recipients.map((emailAddress) => ({
        emailAddress,
        action: 'failed',
        status: '5.1.1',
        diagnosticCode: 'smtp; 550 5.1.1 user unknown',
      })),
      timestamp: at.toISOString(),
      feedbackId: '000001378603176d-5a4b5ad9-6f30-4198-a8c3-b1eb0c270a1d-000000',
      remoteMtaIp: '127.0.2.0',
      reportingMTA: 'dsn; a8-70.smtp-out.amazonses.com',
    },
    mail: sesMail(recipients, at),
  };
}

export function sesComplaint(recipients: string[], at: Date): Record<string, unknown> {
  return {
    notificationType: 'Complaint',
    complaint: {
      userAgent: 'AnyCompany Feedback Loop (V0.01)',
      complainedRecipients: recipients.map((emailAddress) => ({ emailAddress })),
      complaintFeedbackType: 'abuse',
      arrivalDate: at.toISOString(),
      timestamp: at.toISOString(),
      feedbackId: '000001378603177f-18c07c78-fa81-4a58-9dd1-fedc3cb8f49a-000000',
    },
    mail: sesMail(recipients, at),
  };
}

export function sesDelivery(recipients: string[], at: Date): Record<string, unknown> {
  return {
    notificationType: 'Delivery',
    mail: sesMail(recipients, at),
    delivery: {
      timestamp: at.toISOString(),
      processingTimeMillis: 546,
      recipients,
      smtpResponse: '250 ok:  Message 64111812 accepted',
      remoteMtaIp: '127.0.2.0',
      reportingMTA: 'a8-70.smtp-out.amazonses.com',
    },
  };
}
