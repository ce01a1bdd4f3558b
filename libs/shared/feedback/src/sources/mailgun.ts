/**
 * Mailgun's webhooks: `{ "signature": { timestamp, token, signature }, "event-data": { event,
 * recipient, timestamp (unix s), severity?, ... } }`
 * (https://documentation.mailgun.com/docs/mailgun/user-manual/events/webhooks).
 * `delivered` → delivered; `failed` of `severity: "permanent"` → hard bounce, of `"temporary"`
 * → soft bounce; `complained` → complaint; the rest are skipped.
 */
import type { Outcome, ReadEvents } from '../events.ts';
import { SourceShapeError, isRecord, stringField, unixSeconds } from './shape.ts';

function outcomeOf(event: string | undefined, severity: string | undefined): Outcome | undefined {
  if (event === 'delivered') return 'delivered';
  if (event === 'complained') return 'complaint';
  if (event === 'failed') return severity === 'temporary' ? 'soft_bounce' : 'hard_bounce';
  return undefined;
}

export interface MailgunSignature {
  timestamp: string;
  token: string;
  signature: string;
}

export function mailgunSignatureOf(body: unknown): MailgunSignature | undefined {
  const signature = isRecord(body) ? body['signature'] : undefined;
  if (!isRecord(signature)) return undefined;
  const timestamp = signature['timestamp'];
  const token = stringField(signature, 'token');
  const value = stringField(signature, 'signature');
  const stamp = typeof timestamp === 'number' ? String(timestamp) : typeof timestamp === 'string' ? timestamp : undefined;
  return stamp === undefined || token === undefined || value === undefined ? undefined : { timestamp: stamp, token, signature: value };
}

export function readMailgun(body: unknown, now: number): ReadEvents {
  const data = isRecord(body) ? body['event-data'] : undefined;
  if (!isRecord(data)) throw new SourceShapeError('A Mailgun webhook body is `{ "signature": {...}, "event-data": {...} }`.');
  const email = stringField(data, 'recipient');
  const outcome = outcomeOf(stringField(data, 'event'), stringField(data, 'severity'));
  if (email === undefined || outcome === undefined) return { events: [], skipped: 1 };
  return { events: [{ email, outcome, at: unixSeconds(data['timestamp'], now), source: 'mailgun' }], skipped: 0 };
}
