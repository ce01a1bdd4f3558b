/**
 * SendGrid's Event Webhook: a JSON array of events, each `{ email, timestamp (unix s), event,
 * type?, ... }` (https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/event).
 * `delivered` → delivered; `bounce` of `type: "bounce"` (or without type) → hard bounce, of
 * `type: "blocked"` → soft bounce; `deferred` → soft bounce; `spamreport` → complaint. The others
 * (processed, open, click, dropped, unsubscribe...) say nothing of the mailbox and are skipped.
 */
import type { Outcome, ReadEvents } from '../events.ts';
import { SourceShapeError, isRecord, stringField, unixSeconds } from './shape.ts';

function outcomeOf(event: string | undefined, type: string | undefined): Outcome | undefined {
  switch (event) {
    case 'delivered':
      return 'delivered';
    case 'bounce':
      return type === 'blocked' ? 'soft_bounce' : 'hard_bounce';
    case 'deferred':
      return 'soft_bounce';
    case 'spamreport':
      return 'complaint';
    default:
      return undefined;
  }
}

export function readSendgrid(body: unknown, now: number): ReadEvents {
  if (!Array.isArray(body)) throw new SourceShapeError('A SendGrid Event Webhook body is a JSON array of events.');
  const read: ReadEvents = { events: [], skipped: 0 };
  for (const entry of body) {
    const email = isRecord(entry) ? stringField(entry, 'email') : undefined;
    const outcome = isRecord(entry) ? outcomeOf(stringField(entry, 'event'), stringField(entry, 'type')) : undefined;
    if (!isRecord(entry) || email === undefined || outcome === undefined) read.skipped += 1;
    else read.events.push({ email, outcome, at: unixSeconds(entry['timestamp'], now), source: 'sendgrid' });
  }
  return read;
}
