/**
 * Amazon SES notifications through SNS. SNS posts (as `text/plain`) an envelope: `{ "Type":
 * "SubscriptionConfirmation", "SubscribeURL", ... }` once, when the subscription is made, which
 * must be visited to confirm it; then `{ "Type": "Notification", "Message": "<JSON>", ... }`,
 * whose Message is SES's notification: `notificationType` (or `eventType`, for configuration-set
 * event publishing) `Bounce` with `bounce.bounceType` (`Permanent` → hard, `Transient` and
 * `Undetermined` → soft) and `bounce.bouncedRecipients[].emailAddress`; `Complaint` with
 * `complaint.complainedRecipients[]`; `Delivery` with `delivery.recipients[]` (strings).
 * (https://docs.aws.amazon.com/ses/latest/dg/notification-contents.html)
 */
import { timeOf, type FeedbackEvent, type Outcome, type ReadEvents } from '../events.ts';
import { SourceShapeError, isRecord, stringField } from './shape.ts';

export type SnsEnvelope =
  | { type: 'SubscriptionConfirmation'; subscribeUrl: string }
  | { type: 'Notification'; message: string }
  | { type: 'UnsubscribeConfirmation' };

export function readSnsEnvelope(body: unknown): SnsEnvelope {
  const type = isRecord(body) ? stringField(body, 'Type') : undefined;
  if (!isRecord(body) || type === undefined) throw new SourceShapeError('An SNS message is a JSON object with `Type`.');
  if (type === 'SubscriptionConfirmation') {
    const subscribeUrl = stringField(body, 'SubscribeURL');
    if (subscribeUrl === undefined) throw new SourceShapeError('An SNS SubscriptionConfirmation carries `SubscribeURL`.');
    return { type, subscribeUrl };
  }
  if (type === 'Notification') {
    const message = stringField(body, 'Message');
    if (message === undefined) throw new SourceShapeError('An SNS Notification carries `Message`.');
    return { type, message };
  }
  if (type === 'UnsubscribeConfirmation') return { type };
  throw new SourceShapeError(`Unknown SNS message type ${JSON.stringify(type.slice(0, 40))}.`);
}

function addresses(list: unknown, field?: string): string[] {
  if (!Array.isArray(list)) return [];
  const found: string[] = [];
  for (const entry of list as unknown[]) {
    const value: unknown = field === undefined ? entry : isRecord(entry) ? entry[field] : undefined;
    if (typeof value === 'string') found.push(value);
  }
  return found;
}

/** SES's notification (the SNS Message, parsed) as events. */
export function readSesMessage(message: unknown, now: number): ReadEvents {
  if (!isRecord(message)) throw new SourceShapeError('An SES notification is a JSON object.');
  const kind = stringField(message, 'notificationType') ?? stringField(message, 'eventType');
  const part = (name: string) => {
    const value = message[name];
    return isRecord(value) ? value : {};
  };
  let outcome: Outcome | undefined;
  let recipients: string[] = [];
  let at = now;
  if (kind === 'Bounce') {
    const bounce = part('bounce');
    outcome = stringField(bounce, 'bounceType') === 'Permanent' ? 'hard_bounce' : 'soft_bounce';
    recipients = addresses(bounce['bouncedRecipients'], 'emailAddress');
    at = timeOf(bounce['timestamp'], now);
  } else if (kind === 'Complaint') {
    const complaint = part('complaint');
    outcome = 'complaint';
    recipients = addresses(complaint['complainedRecipients'], 'emailAddress');
    at = timeOf(complaint['timestamp'], now);
  } else if (kind === 'Delivery') {
    const delivery = part('delivery');
    outcome = 'delivered';
    recipients = addresses(delivery['recipients']);
    at = timeOf(delivery['timestamp'], now);
  }
  if (outcome === undefined || recipients.length === 0) return { events: [], skipped: 1 };
  const found = outcome;
  return { events: recipients.map((email): FeedbackEvent => ({ email, outcome: found, at, source: 'ses' })), skipped: 0 };
}

export function parseSesMessage(message: string, now: number): ReadEvents {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    throw new SourceShapeError('The SNS Notification `Message` is not JSON.');
  }
  return readSesMessage(parsed, now);
}

/**
 * Where a subscription may be confirmed: SNS's own HTTPS endpoints only (the URL comes in a body
 * anyone with the key could write, so it must not reach anything else); `allowAny` for test rigs
 * and private networks (LIST_ALLOW_PRIVATE_CALLBACKS).
 */
export function confirmableUrl(url: string, allowAny: boolean): URL | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (allowAny) return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed : undefined;
  const snsHost = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/.test(parsed.hostname);
  return parsed.protocol === 'https:' && snsHost && parsed.port === '' ? parsed : undefined;
}
