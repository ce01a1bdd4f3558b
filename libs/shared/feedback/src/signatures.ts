/**
 * Webhook signatures of the sending services, checked when the operator configured the
 * service's key (decisions, "Learning from sends"):
 * - Mailgun: HMAC-SHA256 of `timestamp + token` with the webhook signing key, hex.
 * - SendGrid (Signed Event Webhook): ECDSA P-256 / SHA-256 over `timestamp + raw body`, the
 *   signature base64 DER in `X-Twilio-Email-Event-Webhook-Signature`, the timestamp in
 *   `X-Twilio-Email-Event-Webhook-Timestamp`, the public key as SendGrid shows it (base64 DER,
 *   SubjectPublicKeyInfo).
 * Node's crypto does both; compares are constant-time. The signed timestamp's age is not
 * limited: the services retry a webhook for hours (SendGrid up to 72), and a replayed event is
 * one the service did report, which changes no standing (the later event decides).
 */
import { createHmac, createPublicKey, timingSafeEqual, verify, type KeyObject } from 'node:crypto';
import type { MailgunSignature } from './sources/mailgun.ts';

export function mailgunSignatureValid(signingKey: string, signature: MailgunSignature | undefined): boolean {
  if (signature === undefined) return false;
  const expected = createHmac('sha256', signingKey)
    .update(signature.timestamp + signature.token, 'utf8')
    .digest();
  const given = Buffer.from(signature.signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function sendgridPublicKey(base64: string): KeyObject {
  const trimmed = base64.replace(/-----(BEGIN|END) PUBLIC KEY-----|\s/g, '');
  return createPublicKey({ key: Buffer.from(trimmed, 'base64'), format: 'der', type: 'spki' });
}

export function sendgridSignatureValid(
  key: KeyObject,
  rawBody: string,
  signature: string | undefined,
  timestamp: string | undefined,
): boolean {
  if (signature === undefined || timestamp === undefined) return false;
  try {
    return verify('sha256', Buffer.from(timestamp + rawBody, 'utf8'), key, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}
