/**
 * Postmark's webhooks, one record per call (an array of them is read too):
 * - Bounce: `{ "RecordType": "Bounce", "Type": "HardBounce", "Email", "BouncedAt", ... }`;
 *   `HardBounce` and `BadEmailAddress` are hard bounces, `SoftBounce`, `Transient`, `DnsError`
 *   and `Blocked` soft ones, `SpamComplaint` a complaint; other types (AutoResponder,
 *   Unsubscribe, ...) are skipped.
 * - Delivery: `{ "RecordType": "Delivery", "Recipient", "DeliveredAt", ... }`.
 * - SpamComplaint: `{ "RecordType": "SpamComplaint", "Email", "BouncedAt", ... }`.
 * (https://postmarkapp.com/developer/webhooks/webhooks-overview)
 */
import { timeOf, type FeedbackEvent, type Outcome, type ReadEvents } from '../events.ts';
import { SourceShapeError, isRecord, stringField } from './shape.ts';

const BOUNCE_TYPES: Readonly<Record<string, Outcome>> = {
  HardBounce: 'hard_bounce',
  BadEmailAddress: 'hard_bounce',
  SoftBounce: 'soft_bounce',
  Transient: 'soft_bounce',
  DnsError: 'soft_bounce',
  Blocked: 'soft_bounce',
  SpamComplaint: 'complaint',
};

function readRecord(record: Record<string, unknown>, now: number): FeedbackEvent | undefined {
  const kind = stringField(record, 'RecordType');
  if (kind === 'Delivery') {
    const email = stringField(record, 'Recipient');
    return email === undefined ? undefined : { email, outcome: 'delivered', at: timeOf(record['DeliveredAt'], now), source: 'postmark' };
  }
  const email = stringField(record, 'Email');
  const outcome = kind === 'SpamComplaint' ? 'complaint' : kind === 'Bounce' ? BOUNCE_TYPES[stringField(record, 'Type') ?? ''] : undefined;
  return email === undefined || outcome === undefined
    ? undefined
    : { email, outcome, at: timeOf(record['BouncedAt'], now), source: 'postmark' };
}

export function readPostmark(body: unknown, now: number): ReadEvents {
  const records = Array.isArray(body) ? body : [body];
  if (!records.every((record) => isRecord(record) && typeof record['RecordType'] === 'string'))
    throw new SourceShapeError('A Postmark webhook body is a record with `RecordType` (Bounce, Delivery or SpamComplaint).');
  const read: ReadEvents = { events: [], skipped: 0 };
  for (const record of records) {
    const event = isRecord(record) ? readRecord(record, now) : undefined;
    if (event === undefined) read.skipped += 1;
    else read.events.push(event);
  }
  return read;
}
